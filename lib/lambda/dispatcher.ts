import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { z } from 'zod';
import { type DeletionRecord, InvalidMessageError, NAME_PATTERN } from '../core/index.ts';
import { count, keysOf, loggedDeletionEvents, type Telemetry } from '../observability/index.ts';
import {
  createPipeline,
  type Dispatcher,
  type Offboarder,
  type Planner,
} from '../pipeline/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env, errorText } from './boot.ts';
import { countWork } from './work-metrics.ts';

/** The part of a deletion's stream image the dispatcher needs (and its log lines name). */
const DeletionImage = z.object({
  type: z.literal('DELETION'),
  tenant: z.string().regex(NAME_PATTERN),
  deletionId: z.uuid(),
  round: z.int().min(1),
  state: z.literal('PENDING'),
  stream: z.string().optional(),
  generation: z.int().optional(),
});

/** The part of a plan's stream image that starts it. */
const PlanImage = z.object({
  type: z.literal('PLAN'),
  tenant: z.string().regex(NAME_PATTERN),
  planId: z.uuid(),
  state: z.literal('PENDING'),
  stream: z.string().optional(),
});

/** The part of an offboarding's stream image that asks for its next fan-out step. */
const OffboardingImage = z.object({
  type: z.literal('OFFBOARDING'),
  tenant: z.string().regex(NAME_PATTERN),
  offboardingId: z.uuid(),
  state: z.literal('RUNNING'),
  fannedOut: z.literal(false),
});

/** A deletion an offboarding took in, COMPLETED: counted towards that offboarding. */
const CompletedImage = z.object({
  type: z.literal('DELETION'),
  tenant: z.string().regex(NAME_PATTERN),
  deletionId: z.uuid(),
  state: z.literal('COMPLETED'),
  stream: z.string(),
  offboardingId: z.uuid(),
});

type Pending =
  | { kind: 'offboarding'; ref: { tenant: string; offboardingId: string }; keys: object }
  | {
      kind: 'completed';
      ref: { tenant: string; stream: string; deletionId: string; offboardingId: string };
      keys: object;
    }
  | {
      kind: 'deletion';
      ref: { tenant: string; deletionId: string; round: number };
      /** The deletion as the record's new image shows it: the item, as a read would. */
      image: DeletionRecord;
      keys: object;
    }
  | { kind: 'plan'; ref: { tenant: string; planId: string }; keys: object };

function pendingWorkOf(record: DynamoDBRecord): Pending {
  const image = record.dynamodb?.NewImage;
  if (!image) throw new InvalidMessageError('stream record has no new image');
  // The stream's images use the SDK's attribute value shape.
  const item = unmarshall(image as never);
  if (item.type === 'OFFBOARDING') {
    const step = OffboardingImage.safeParse(item);
    if (!step.success) throw new InvalidMessageError(`not an offboarding step: ${step.error}`);
    const { tenant, offboardingId } = step.data;
    return { kind: 'offboarding', ref: { tenant, offboardingId }, keys: keysOf({ tenant }) };
  }
  if (item.type === 'PLAN') {
    const plan = PlanImage.safeParse(item);
    if (!plan.success) throw new InvalidMessageError(`not a pending plan: ${plan.error}`);
    const { tenant, planId, stream } = plan.data;
    return { kind: 'plan', ref: { tenant, planId }, keys: keysOf({ tenant, stream }) };
  }
  if (item.type === 'DELETION' && item.state === 'COMPLETED') {
    const completed = CompletedImage.safeParse(item);
    if (!completed.success) {
      throw new InvalidMessageError(`not a completed deletion: ${completed.error}`);
    }
    const { tenant, stream, deletionId, offboardingId } = completed.data;
    const ref = { tenant, stream, deletionId, offboardingId };
    return { kind: 'completed', ref, keys: keysOf(completed.data) };
  }
  const result = DeletionImage.safeParse(item);
  if (!result.success) throw new InvalidMessageError(`not a pending deletion: ${result.error}`);
  const { tenant, deletionId, round } = result.data;
  const ref = { tenant, deletionId, round };
  return { kind: 'deletion', ref, image: item as DeletionRecord, keys: keysOf(result.data) };
}

/**
 * Dispatcher: each new (or re-opened) deletion on the table's stream is laid out and fanned
 * out, and so is each new plan (a dry run, through the planner and its own queue); each step
 * of a tenant offboarding is taken, and each deletion that completes is counted towards its
 * tenant's offboarding. Failures are reported per record, so Lambda retries from the failed
 * one, bisects, and finally hands the record to the on-failure destination.
 */
export const dispatcherHandler =
  (
    dispatcher: Pick<Dispatcher, 'dispatch'>,
    telemetry: Telemetry,
    planner?: Pick<Planner, 'start'>,
    offboarder?: Pick<Offboarder, 'fanOut' | 'deletionCompleted'>,
  ) =>
  async (event: DynamoDBStreamEvent, context?: Context) =>
    telemetry.invocation(context, {}, () =>
      processPartialResponse(
        event,
        async (record: DynamoDBRecord) => {
          // Logged in the record's scope, so the line names its deletion when it is known.
          const failed = (error: unknown) => {
            telemetry.logger.warn('dispatch failed; the record will be retried', {
              sequenceNumber: record.dynamodb?.SequenceNumber,
              error: errorText(error),
            });
            return error;
          };
          let pending: Pending;
          try {
            pending = pendingWorkOf(record);
          } catch (error) {
            throw failed(error);
          }
          await telemetry.scope(pending.keys, async () => {
            try {
              if (pending.kind === 'offboarding') {
                if (!offboarder) throw new Error('this dispatcher was built without an offboarder');
                const outcome = await offboarder.fanOut(pending.ref);
                telemetry.logger.info('offboarding step', { ...pending.ref, outcome });
                if (outcome === 'completed') count('offboardingsCompleted', 1);
                return;
              }
              if (pending.kind === 'completed') {
                if (!offboarder) throw new Error('this dispatcher was built without an offboarder');
                const outcome = await offboarder.deletionCompleted(pending.ref);
                if (outcome !== 'not-linked') {
                  telemetry.logger.info('offboarding counted a deletion', { outcome });
                }
                if (outcome === 'completed') count('offboardingsCompleted', 1);
                return;
              }
              if (pending.kind === 'plan') {
                if (!planner) throw new Error('this dispatcher was built without a planner');
                const outcome = await planner.start(pending.ref);
                telemetry.logger.info('plan started', { planId: pending.ref.planId, outcome });
                return;
              }
              const dispatched = await dispatcher.dispatch(pending.ref, pending.image);
              if ('firstPage' in dispatched && dispatched.firstPage)
                countWork(dispatched.firstPage);
              telemetry.logger.info('dispatched', { round: pending.ref.round, ...dispatched });
            } catch (error) {
              throw failed(error);
            }
          });
        },
        // One processor per invocation: it holds the batch's state.
        new BatchProcessor(EventType.DynamoDBStreams),
        { throwOnFullBatchFailure: false },
      ),
    );

export function createDispatcherHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('dispatcher', env, clients);
  const { dispatcher, planner, offboarder } = createPipeline({
    config,
    clients: sdk,
    events: loggedDeletionEvents,
  });
  return dispatcherHandler(dispatcher, telemetry, planner, offboarder);
}
