import type { Dispatcher } from './dispatch.ts';
import { failpoint } from './failpoints.ts';
import { type Finalizer, isReadyToVerify } from './finalizer.ts';
import { fenceOf, type PageMessage } from './messages.ts';
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
        const final = { ...claimed, ...(await this.#store.totals(claimed)) };
        if ((await this.#store.fail(final, reason)) === 'recorded') report.failed++;
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
    // From the chains' own records: their open pages, the next page of each unfinished chain,
    // and chains that ended with nothing open but were never counted (a crash in between).
    const messages: PageMessage[] = [];
    let settled = 0;
    for await (const chain of this.#store.chains(deletion)) {
      const page = (number: number) => ({
        ...fenceOf(deletion),
        type: 'page' as const,
        chainId: chain.chainId,
        page: number,
      });
      const open = Object.values(chain.open ?? {});
      messages.push(...open.map((record) => page(record.page)));
      if (!chain.ended) messages.push(page(chain.lastPage + 1));
      else if (open.length === 0 && !chain.settled) {
        if ((await this.#store.settleChain(deletion, chain)) === 'recorded') settled++;
      }
    }
    await this.#queue.send(messages);
    if (settled > 0) await this.#finalizer.finalizeIfReady(deletion);
    return messages.length;
  }
}
