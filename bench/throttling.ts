import { LocalStack } from '#lib/local/local-stack.ts';
import type { Clients } from '#lib/support/index.ts';
import { type BenchContext, seededStream, stackContext, TENANT } from './context.ts';
import type { RequestCounter } from './counting.ts';
import { letheDelete } from './deleters.ts';
import type { QueueTimeline } from './timeline.ts';

/** S3's request limit in simulation (bench/moto_server_bulk.py, `/_bench/throttle`). */
export interface ThrottlePlan {
  /** Deleted keys a second each prefix partition admits: R. */
  keysPerSecond: number;
  /** Keys a page of the run's stack holds (`LETHE_PAGE_SIZE`). */
  pageSize: number;
  objects: number;
  partitions: number;
}

export interface ThrottleRun extends ThrottlePlan {
  /** Each partition's bucket, in keys: a second's worth, at least a page. */
  burst: number;
  /** Keys admitted a second from the first admitted DeleteObjects to the last. */
  sustainedKeysPerSecond: number;
  /** Sustained over R x partitions: at least 0.9 is the target. */
  ofLimit: number;
  deleteRequests: number;
  refused: number;
  /** Refused over every DeleteObjects: at most 0.05 is the target. */
  slowDownShare: number;
  seconds: number;
}

interface ThrottleCounts {
  admitted: number;
  refused: number;
  keys: number;
  sustainedKeysPerSecond: number;
}

/**
 * Stamps each delete request with the time it is sent (`x-bench-sent-at`): the simulated limit
 * counts a request then, as S3 counts it when it arrives, and not when the emulator, busy with
 * other requests, gets to it (which moved requests a chain spaced a slot apart to within a
 * fraction of a second of each other).
 */
export function stampSendTime(clients: Clients): Clients {
  clients.s3Deletes.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers['x-bench-sent-at'] = String(Date.now());
      return next(args);
    },
    { step: 'finalizeRequest', name: 'benchSentAt', priority: 'low' },
  );
  return clients;
}

async function throttle(s3Endpoint: string, keysPerSecond: number, burst = 0) {
  const response = await fetch(`${s3Endpoint}/_bench/throttle`, {
    method: 'POST',
    body: JSON.stringify({ keysPerSecond, burst }),
  });
  if (!response.ok) throw new Error(`/_bench/throttle answered ${response.status}`);
  return (await response.json()) as ThrottleCounts;
}

/**
 * A stack of its own deleting a stream while S3 (the benchmark's moto) admits R keys a second
 * per prefix partition and answers SlowDown above it: the rate Lethe sustains against R x
 * partitions, and the share of its DeleteObjects refused. Pages are smaller than the default
 * so that a partition's limit is a few pages a second, as S3's 3,500 keys are of 1,000-key
 * pages, at a rate the emulator can serve. Undefined (and said) when the S3 endpoint has no
 * throttle (an emulator the benchmark did not start).
 */
export async function measureThrottling(
  bench: BenchContext,
  parts: {
    counter: RequestCounter;
    timeline: QueueTimeline;
    settings: Record<string, string | undefined>;
  },
  plan: ThrottlePlan,
): Promise<ThrottleRun | undefined> {
  const { options, endpoint, s3Endpoint, log } = bench;
  try {
    await throttle(s3Endpoint, 0);
  } catch (error) {
    log(`throttling: skipped, S3 at ${s3Endpoint} has no throttle (${(error as Error).message})`);
    return undefined;
  }
  const stack = await LocalStack.start({
    endpoint,
    s3Endpoint,
    port: 0,
    namePrefix: 'bench-throttle',
    wrapClients: stampSendTime,
    settings: { ...parts.settings, LETHE_PAGE_SIZE: String(plan.pageSize) },
    ...(options.workerConcurrency ? { workerConcurrency: options.workerConcurrency } : {}),
    log,
  });
  const burst = Math.max(plan.keysPerSecond, plan.pageSize);
  try {
    const context = stackContext(bench, stack, parts.counter, parts.timeline);
    await seededStream(context, 'throttled', plan.objects, plan.partitions);
    await throttle(s3Endpoint, plan.keysPerSecond, burst);
    const result = await letheDelete(context.api, TENANT, 'throttled', context.readDeletion);
    const counts = await throttle(s3Endpoint, 0);
    const deleteRequests = counts.admitted + counts.refused;
    const run: ThrottleRun = {
      ...plan,
      burst,
      sustainedKeysPerSecond: counts.sustainedKeysPerSecond,
      ofLimit: counts.sustainedKeysPerSecond / (plan.keysPerSecond * plan.partitions),
      deleteRequests,
      refused: counts.refused,
      slowDownShare: deleteRequests > 0 ? counts.refused / deleteRequests : 0,
      seconds: result.wallMs / 1000,
    };
    log(
      `throttling at ${plan.keysPerSecond} keys/s per partition: ${run.sustainedKeysPerSecond.toFixed(0)} keys/s sustained (${(100 * run.ofLimit).toFixed(0)}% of ${plan.keysPerSecond * plan.partitions}), ${counts.refused} of ${deleteRequests} DeleteObjects refused`,
    );
    return run;
  } finally {
    await throttle(s3Endpoint, 0).catch(() => undefined);
    await stack.stop();
  }
}
