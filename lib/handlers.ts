import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import { z } from 'zod';
import type { HttpHandler } from './api/http-api.ts';
import type { Dispatcher } from './dispatch.ts';
import { InvalidMessageError } from './errors.ts';
import { parseWorkMessage, type WorkMessage } from './messages.ts';
import { NAME_PATTERN } from './names.ts';
import { count, type DeletionKeys, keysOf, sample, type Telemetry } from './observability.ts';
import { oldestOpenDeletion } from './observed-progress.ts';
import type { PageWorker, WorkOutcome } from './page-worker.ts';
import type { ProgressStore } from './progress.ts';
import type { Sweeper } from './sweeper.ts';

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

function pendingDeletionOf(record: DynamoDBRecord) {
  const image = record.dynamodb?.NewImage;
  if (!image) throw new InvalidMessageError('stream record has no new image');
  // The stream's images use the SDK's attribute value shape.
  const result = DeletionImage.safeParse(unmarshall(image as never));
  if (!result.success) throw new InvalidMessageError(`not a pending deletion: ${result.error}`);
  const { tenant, deletionId, round } = result.data;
  return { ref: { tenant, deletionId, round }, keys: keysOf(result.data) };
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Dispatcher: each new (or re-opened) deletion on the table's stream is planned and fanned
 * out. Failures are reported per record, so Lambda retries from the failed one, bisects, and
 * finally hands the record to the on-failure destination.
 */
export const dispatcherHandler =
  (dispatcher: Dispatcher, telemetry: Telemetry) =>
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
          let pending: ReturnType<typeof pendingDeletionOf>;
          try {
            pending = pendingDeletionOf(record);
          } catch (error) {
            throw failed(error);
          }
          await telemetry.scope(pending.keys, async () => {
            try {
              const outcome = await dispatcher.dispatch(pending.ref);
              telemetry.logger.info('dispatched', { round: pending.ref.round, outcome });
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

/** Counts a page's outcome into the invocation's metrics. */
function countWork(result: WorkOutcome) {
  if (result.outcome !== 'deleted') return;
  count('pagesDeleted', 1);
  count('objectsDeleted', result.objects);
  count('bytesDeleted', result.bytes);
  count('keysFailed', result.failures);
  count('keysRetried', result.retriedKeys);
}

/** Worker: one message, one page; failures are reported per message (partial batch). */
export const workerHandler =
  (worker: PageWorker, telemetry: Telemetry) =>
  async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> =>
    telemetry.invocation(context, {}, () =>
      processPartialResponse(
        event,
        async (record: SQSRecord) => {
          // Logged in the message's scope, so the line names its deletion when it is known.
          const failed = (error: unknown, message?: WorkMessage) => {
            telemetry.logger.warn('work failed; the message will be redelivered', {
              messageId: record.messageId,
              receiveCount: record.attributes?.ApproximateReceiveCount,
              ...message,
              error: errorText(error),
            });
            return error;
          };
          let message: WorkMessage;
          try {
            message = parseWorkMessage(record.body);
          } catch (error) {
            throw failed(error);
          }
          await telemetry.scope(message, async () => {
            try {
              const result = await worker.handle(message);
              countWork(result);
              telemetry.logger.info('work done', { ...message, ...result });
            } catch (error) {
              throw failed(error, message);
            }
          });
        },
        new BatchProcessor(EventType.SQS),
        { throwOnFullBatchFailure: false },
      ),
    );

/**
 * Sweeper: scheduled; resumes stalled deletions. It also reports the age of the oldest open
 * deletion, measured before the sweep so that a sweeper that keeps failing still reports it.
 */
export const sweeperHandler =
  (sweeper: Sweeper, store: ProgressStore, telemetry: Telemetry, now = () => new Date()) =>
  async (_event?: unknown, context?: Context) =>
    telemetry.invocation(context, {}, async () => {
      const oldest = await oldestOpenDeletion(store, now());
      sample('oldestDeletionAge', oldest?.ageSeconds ?? 0);
      const report = await sweeper.sweep();
      telemetry.logger.info('swept', {
        ...report,
        ...(oldest
          ? {
              oldest: {
                ...keysOf(oldest.deletion),
                state: oldest.deletion.state,
                ageSeconds: oldest.ageSeconds,
              },
            }
          : {}),
      });
      return report;
    });

/** The deletion an API request names in its path, or its answer names in its body. */
function requestKeys(event: APIGatewayProxyEvent, response?: APIGatewayProxyResult) {
  const params = event.pathParameters ?? {};
  let body: DeletionKeys = {};
  if (response && response.statusCode < 300 && response.body.startsWith('{')) {
    try {
      const { deletionId, tenant, stream, generation } = JSON.parse(response.body) as Record<
        string,
        unknown
      >;
      body = {
        ...(typeof deletionId === 'string' ? { deletionId } : {}),
        ...(typeof tenant === 'string' ? { tenant } : {}),
        ...(typeof stream === 'string' ? { stream } : {}),
        ...(typeof generation === 'number' ? { generation } : {}),
      };
    } catch {
      // Not JSON after all: the path's keys are all there is.
    }
  }
  return keysOf({
    tenant: params.tenant,
    stream: params.stream,
    deletionId: params.deletionId,
    ...body,
  });
}

/** Api: one structured line per request, with its deletion's keys; a 5xx is an error. */
export const apiHandler =
  (api: HttpHandler, telemetry: Telemetry) =>
  async (event: APIGatewayProxyEvent, context?: Context): Promise<APIGatewayProxyResult> =>
    telemetry.invocation(context, requestKeys(event), async () => {
      const started = performance.now();
      const response = await api(event);
      const line = {
        ...requestKeys(event, response),
        method: event.httpMethod,
        resource: event.resource,
        status: response.statusCode,
        durationMs: Math.round(performance.now() - started),
      };
      if (response.statusCode >= 500) telemetry.logger.error('request failed', line);
      else telemetry.logger.info('request', line);
      return response;
    });
