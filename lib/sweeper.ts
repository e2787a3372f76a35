import type { Dispatcher } from './dispatch.ts';
import { failpoint } from './failpoints.ts';
import { type Finalizer, isReadyToVerify } from './finalizer.ts';
import { fenceOf } from './messages.ts';
import type { DeletionRecord } from './model.ts';
import type { ProgressStore } from './progress.ts';
import type { WorkQueue } from './work-queue.ts';

export interface SweeperOptions {
  readonly store: ProgressStore;
  readonly queue: WorkQueue;
  readonly dispatcher: Dispatcher;
  readonly finalizer: Finalizer;
  /** Seconds without progress after which an open deletion is resumed. */
  readonly staleAfterSeconds: number;
  /** Attempts (the first run included) before a stalled deletion is marked FAILED. */
  readonly maxAttempts: number;
  readonly now?: () => Date;
}

export interface SweepReport {
  stale: number;
  resumed: number;
  failed: number;
  messages: number;
}

/**
 * Finds open deletions that stopped making progress and resumes them from their records:
 * the pages that were listed but not counted, and the next page of every unfinished chain.
 * Each resume is claimed with a condition, so it is safe to run sweepers side by side.
 */
export class Sweeper {
  readonly #store: ProgressStore;
  readonly #queue: WorkQueue;
  readonly #dispatcher: Dispatcher;
  readonly #finalizer: Finalizer;
  readonly #staleAfterMs: number;
  readonly #maxAttempts: number;
  readonly #now: () => Date;

  constructor(options: SweeperOptions) {
    this.#store = options.store;
    this.#queue = options.queue;
    this.#dispatcher = options.dispatcher;
    this.#finalizer = options.finalizer;
    this.#staleAfterMs = options.staleAfterSeconds * 1000;
    this.#maxAttempts = options.maxAttempts;
    this.#now = options.now ?? (() => new Date());
  }

  async sweep(): Promise<SweepReport> {
    const report: SweepReport = { stale: 0, resumed: 0, failed: 0, messages: 0 };
    const cutoff = new Date(this.#now().getTime() - this.#staleAfterMs);
    for await (const seen of this.#store.stale(cutoff)) {
      report.stale++;
      const claimed = await this.#store.claimStale(seen);
      if (!claimed) continue;
      failpoint('sweeper.after-claim');
      if (claimed.attempts > this.#maxAttempts) {
        const reason = {
          code: 'Stalled',
          message: `no progress after ${this.#maxAttempts} attempts; retry it once the cause is fixed`,
        };
        if ((await this.#store.fail(claimed, reason)) === 'recorded') report.failed++;
        continue;
      }
      report.messages += await this.#resume(claimed);
      report.resumed++;
    }
    return report;
  }

  /** The claim's own stream record re-dispatches a PENDING deletion too; both are idempotent. */
  async #resume(deletion: DeletionRecord): Promise<number> {
    if (deletion.state === 'PENDING') {
      await this.#dispatcher.dispatch(deletion);
      return 0;
    }
    if (isReadyToVerify(deletion)) {
      await this.#finalizer.finalize(deletion);
      return 0;
    }
    const pages = [];
    for await (const page of this.#store.openPages(deletion)) {
      pages.push({
        ...fenceOf(deletion),
        type: 'page' as const,
        chainId: page.chainId,
        page: page.page,
      });
    }
    await this.#queue.send(pages);
    const chains = await this.#dispatcher.startChains(deletion, (chain) => !chain.ended);
    return pages.length + chains;
  }
}
