import type { DeleteObjectsCommandInput, DeleteObjectsCommandOutput } from '@aws-sdk/client-s3';
import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { type Clients, createClients } from '../../lib/support/index.ts';

/**
 * Fault injection around the real SDK clients (middleware, not mocks of the domain): what the
 * pipeline sees is what S3, SQS and DynamoDB would answer on a bad day. Rates are fractions of
 * requests (or keys, or messages); the plan can be changed while the pipeline runs.
 */
export interface FaultPlan {
  /** S3 requests answered 503 SlowDown (the SDK retries them). */
  s3SlowDown?: number;
  /** S3 requests answered 500 InternalError. */
  s3InternalError?: number;
  /** Keys of a DeleteObjects reported with a per-key InternalError, and not deleted. */
  keyInternalError?: number;
  /** Keys always refused with a per-key AccessDenied (a bucket policy, a legal hold). */
  accessDenied?: (key: string) => boolean;
  /** Every work message is sent twice. */
  duplicateMessages?: boolean;
  /** Messages are delayed by up to this many seconds, at random: they arrive out of order. */
  reorderSeconds?: number;
  /** Messages silently lost on sending (SQS said yes, nothing arrives). */
  lostMessages?: number;
  /** Every so many messages sent, one is lost as `lostMessages` loses one: some always are. */
  loseEvery?: number;
  /** DynamoDB requests refused with ProvisionedThroughputExceededException. */
  dynamoThrottle?: number;
}

export interface FaultCounts {
  /** 503 SlowDown answered to a DeleteObjects (the pacer's to take), and to any other request. */
  slowDownDeletes: number;
  slowDownOthers: number;
  s3InternalErrors: number;
  keyErrors: number;
  accessDenied: number;
  duplicated: number;
  delayed: number;
  lost: number;
  throttled: number;
}

/** A small seeded PRNG (mulberry32), so a run's faults can be replayed. */
export function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const serviceError = (name: string, status: number) =>
  Object.assign(new Error(`injected ${name}`), {
    name,
    Code: name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status, attempts: 1, totalRetryDelay: 0 },
  });

/** Fresh clients for the handlers, with the plan's faults injected into every request. */
export function faultyClients(plan: FaultPlan, seed = 42) {
  const random = prng(seed);
  const counts: FaultCounts = {
    slowDownDeletes: 0,
    slowDownOthers: 0,
    s3InternalErrors: 0,
    keyErrors: 0,
    accessDenied: 0,
    duplicated: 0,
    delayed: 0,
    lost: 0,
    throttled: 0,
  };
  const chance = (rate: number | undefined) => rate !== undefined && rate > 0 && random() < rate;
  const wrap = (clients: Clients): Clients => {
    const fresh = createClients({ forcePathStyle: true });
    // Inside the retry loop ('deserialize' runs per attempt): the SDK's own retries answer
    // these, except on the delete client, where the page deleter and the chain's pace do.
    for (const s3 of [fresh.s3, fresh.s3Deletes])
      s3.middlewareStack.add(
        (next, context) => async (args) => {
          // At the plan's rates, and the first request of each kind in any case: a run sees
          // every fault it plans, however its requests interleave.
          const deletes = context.commandName === 'DeleteObjectsCommand';
          const slowDowns = deletes ? counts.slowDownDeletes : counts.slowDownOthers;
          if (plan.s3SlowDown && (slowDowns === 0 || chance(plan.s3SlowDown))) {
            if (deletes) counts.slowDownDeletes++;
            else counts.slowDownOthers++;
            throw serviceError('SlowDown', 503);
          }
          if (
            plan.s3InternalError &&
            (counts.s3InternalErrors === 0 || chance(plan.s3InternalError))
          ) {
            counts.s3InternalErrors++;
            throw serviceError('InternalError', 500);
          }
          return next(args);
        },
        { step: 'deserialize', name: 'injectS3Errors' },
      );
    fresh.s3Deletes.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'DeleteObjectsCommand') return next(args);
        const input = args.input as DeleteObjectsCommandInput;
        const errors: Array<{ Key: string; Code: string; Message: string }> = [];
        const kept = (input.Delete?.Objects ?? []).filter(({ Key = '' }) => {
          if (plan.accessDenied?.(Key)) {
            counts.accessDenied++;
            errors.push({ Key, Code: 'AccessDenied', Message: 'Access Denied (injected)' });
            return false;
          }
          if (chance(plan.keyInternalError)) {
            counts.keyErrors++;
            errors.push({ Key, Code: 'InternalError', Message: 'injected per-key error' });
            return false;
          }
          return true;
        });
        if (errors.length === 0) return next(args);
        const output: DeleteObjectsCommandOutput =
          kept.length > 0
            ? ((
                await next({
                  ...args,
                  input: { ...input, Delete: { ...input.Delete, Objects: kept } },
                })
              ).output as DeleteObjectsCommandOutput)
            : { $metadata: { httpStatusCode: 200 } };
        return {
          output: { ...output, Errors: [...(output.Errors ?? []), ...errors] },
          response: {},
        } as Awaited<ReturnType<typeof next>>;
      },
      { step: 'initialize', name: 'injectKeyErrors' },
    );
    let sent = 0;
    fresh.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'SendMessageBatchCommand') return next(args);
        const input = args.input as SendMessageBatchCommandInput;
        const lost: string[] = [];
        let entries = (input.Entries ?? []).filter((entry) => {
          sent++;
          const every = plan.loseEvery !== undefined && sent % plan.loseEvery === 0;
          if (!every && !chance(plan.lostMessages)) return true;
          counts.lost++;
          lost.push(entry.Id ?? '');
          return false;
        });
        if (plan.duplicateMessages) {
          counts.duplicated += entries.length;
          entries = entries.flatMap((entry) => [entry, { ...entry, Id: `${entry.Id}-again` }]);
        }
        if (plan.reorderSeconds) {
          entries = entries.map((entry) => {
            counts.delayed++;
            const delay = Math.floor(random() * ((plan.reorderSeconds ?? 0) + 1));
            return { ...entry, DelaySeconds: Math.max(entry.DelaySeconds ?? 0, delay) };
          });
        }
        const result =
          entries.length > 0
            ? await next({ ...args, input: { ...input, Entries: entries } })
            : ({ output: { Successful: [], Failed: [], $metadata: {} }, response: {} } as Awaited<
                ReturnType<typeof next>
              >);
        const output = result.output as { Failed?: Array<{ Id?: string }> };
        // Failures of the copies are not the caller's: it sent each message once.
        output.Failed = (output.Failed ?? []).filter((failure) => !failure.Id?.endsWith('-again'));
        return result;
      },
      { step: 'initialize', name: 'injectMessageFaults' },
    );
    fresh.dynamodb.middlewareStack.add(
      (next) => async (args) => {
        if (chance(plan.dynamoThrottle)) {
          counts.throttled++;
          throw serviceError('ProvisionedThroughputExceededException', 400);
        }
        return next(args);
      },
      { step: 'deserialize', name: 'injectThrottling' },
    );
    void clients;
    return fresh;
  };
  return { wrap, counts };
}
