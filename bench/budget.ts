import { LocalStack } from '#lib/local/local-stack.ts';
import type { Clients } from '#lib/support/index.ts';
import {
  type BenchContext,
  type StackContext,
  seededStream,
  stackContext,
  TENANT,
} from './context.ts';
import type { RequestCounter } from './counting.ts';
import { letheDelete } from './deleters.ts';
import type { QueueTimeline } from './timeline.ts';

export interface BudgetRun {
  /** `LETHE_MAX_KEYS_PER_SECOND` of the run's stack. */
  keysPerSecond: number;
  objects: number;
  partitions: number;
  /**
   * Keys deleted per second, all workers together, once the bucket's first second's worth (it
   * starts full) is spent: from the answer of the DeleteObjects that spent it to the last.
   */
  sustainedKeysPerSecond: number;
  /** Sustained over budget: at most 1.1 when the budget holds. */
  ratio: number;
  /** The same from the first DeleteObjects answered, the first second's worth counted too. */
  withAllowanceRatio?: number;
  /** The most keys deleted in any one second of the run, over the budget. */
  peakSecondRatio: number;
  deleteRequests: number;
  seconds: number;
}

/** The page size of the budget's stack (the default): the bucket holds at least a page. */
const PAGE_SIZE = 1000;

interface Delete {
  at: number;
  keys: number;
}

/** Records when each DeleteObjects answered and how many keys it carried (the delete client). */
function watchDeletes(clients: Clients, deletes: Delete[]): Clients {
  const stack = clients.s3Deletes.middlewareStack as unknown as {
    add(
      middleware: (
        next: (args: { input: Record<string, unknown> }) => Promise<unknown>,
        context: { commandName?: string },
      ) => (args: { input: Record<string, unknown> }) => Promise<unknown>,
      options: Record<string, unknown>,
    ): void;
  };
  stack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'DeleteObjectsCommand') {
        const objects = (args.input.Delete as { Objects?: unknown[] } | undefined)?.Objects ?? [];
        deletes.push({ at: performance.now(), keys: objects.length });
      }
      return result;
    },
    { step: 'initialize', name: 'benchWatchDeletes', override: true },
  );
  return clients;
}

/**
 * A stack of its own with `LETHE_MAX_KEYS_PER_SECOND` at `keysPerSecond`, deleting the
 * throughput layout: how closely the whole pipeline (every worker together) holds the budget.
 */
export async function measureBudget(
  bench: BenchContext,
  parts: {
    counter: RequestCounter;
    timeline: QueueTimeline;
    settings: Record<string, string | undefined>;
  },
  keysPerSecond: number,
): Promise<BudgetRun> {
  const { options, endpoint, s3Endpoint, log } = bench;
  const deletes: Delete[] = [];
  const stack = await LocalStack.start({
    endpoint,
    s3Endpoint,
    port: 0,
    namePrefix: 'bench-budget',
    settings: { ...parts.settings, LETHE_MAX_KEYS_PER_SECOND: String(keysPerSecond) },
    ...(options.workerConcurrency ? { workerConcurrency: options.workerConcurrency } : {}),
    wrapClients: (clients) => watchDeletes(clients, deletes),
    log,
  });
  try {
    const context: StackContext = stackContext(bench, stack, parts.counter, parts.timeline);
    await seededStream(context, 'budget', options.objects, options.partitions);
    const result = await letheDelete(context.api, TENANT, 'budget', context.readDeletion);
    const first = deletes[0];
    const last = deletes.at(-1);
    if (!first || !last || last.at <= first.at) throw new Error('too few deletes to time');
    // The budget is a token bucket that starts full: a second's worth of keys (at least a page)
    // may go at once. The rate it holds is timed after that allowance, from the answer of the
    // delete that spent it to the last; an answer opens a window, so its keys are not in it.
    const allowance = Math.max(PAGE_SIZE, keysPerSecond);
    let opening = 0;
    let spent = first.keys;
    while (spent < allowance && opening < deletes.length - 1) {
      opening += 1;
      spent += deletes[opening]?.keys ?? 0;
    }
    const from = deletes[opening];
    if (!from || last.at <= from.at) throw new Error('too few deletes after the allowance');
    const rateAfter = (start: number) =>
      deletes.slice(start + 1).reduce((sum, entry) => sum + entry.keys, 0) /
      ((last.at - (deletes[start]?.at ?? 0)) / 1000);
    const sustained = rateAfter(opening);
    const perSecond = new Map<number, number>();
    for (const entry of deletes) {
      const second = Math.floor((entry.at - first.at) / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + entry.keys);
    }
    const run: BudgetRun = {
      keysPerSecond,
      objects: result.objects,
      partitions: options.partitions,
      sustainedKeysPerSecond: sustained,
      ratio: sustained / keysPerSecond,
      withAllowanceRatio: rateAfter(0) / keysPerSecond,
      peakSecondRatio: Math.max(...perSecond.values()) / keysPerSecond,
      deleteRequests: deletes.length,
      seconds: result.wallMs / 1000,
    };
    log(
      `budget ${keysPerSecond} keys/s: sustained ${sustained.toFixed(0)} keys/s (${(100 * run.ratio).toFixed(0)}%; ${(100 * (run.withAllowanceRatio ?? 0)).toFixed(0)}% from the first delete)`,
    );
    return run;
  } finally {
    await stack.stop();
  }
}
