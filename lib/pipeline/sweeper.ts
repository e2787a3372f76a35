import {
  type ChainRecord,
  type Clock,
  type DeletionRecord,
  type PageMessage,
  pageMessage,
  secondsBetween,
} from '../core/index.ts';
import { failpoint } from '../support/index.ts';
import { collect, type Dispatcher } from './dispatcher.ts';
import { type Finalizer, isReadyToVerify } from './finalizer.ts';
import { deletionKeys, eachInIsolation, type SweepFailed } from './isolation.ts';
import type { Chains, DeletionEvents, Deletions, Index, WorkSender } from './ports.ts';

export interface SweeperOptions {
  readonly deletions: Deletions<'claimStale' | 'begin'>;
  readonly index: Index<'stale' | 'due' | 'scheduled'>;
  readonly chains: Chains<'list'>;
  readonly queue: WorkSender;
  readonly dispatcher: Pick<Dispatcher, 'dispatch'>;
  readonly finalizer: Pick<Finalizer, 'finalize' | 'settle' | 'fail'>;
  readonly events: DeletionEvents;
  /** Seconds without progress after which an open deletion is resumed. */
  readonly staleAfterSeconds: number;
  /** Attempts (the first run included) before a stalled deletion is marked FAILED. */
  readonly maxAttempts: number;
  readonly clock: Clock;
}

export interface SweepReport {
  /** Scheduled deletions whose grace window was over, and how many of them this sweep began. */
  due: number;
  begun: number;
  stale: number;
  resumed: number;
  failed: number;
  messages: number;
  /** Due deletions not begun because `holds` named them (a later sweep begins them). */
  held?: number;
  /** Items (or listings) that threw: each was reported to `failed`, and the sweep went on. */
  errors?: number;
}

export interface SweepOptions {
  /** Told of each deletion (or listing) that threw; the sweep goes on with the next. */
  readonly failed?: SweepFailed;
  /** A due deletion this answers true for is not begun by this sweep. */
  readonly holds?: (due: DeletionRecord) => boolean;
}

/**
 * Finds open deletions that stopped making progress and resumes them from their records:
 * the pages that were listed but not counted, and the next page of every unfinished chain.
 * Each resume is claimed with a condition, so it is safe to run sweepers side by side.
 */
export class Sweeper {
  readonly #deletions: SweeperOptions['deletions'];
  readonly #index: SweeperOptions['index'];
  readonly #chains: SweeperOptions['chains'];
  readonly #queue: WorkSender;
  readonly #dispatcher: SweeperOptions['dispatcher'];
  readonly #finalizer: SweeperOptions['finalizer'];
  readonly #events: DeletionEvents;
  readonly #staleAfterMs: number;
  readonly #maxAttempts: number;
  readonly #clock: Clock;

  constructor(options: SweeperOptions) {
    this.#deletions = options.deletions;
    this.#index = options.index;
    this.#chains = options.chains;
    this.#queue = options.queue;
    this.#dispatcher = options.dispatcher;
    this.#finalizer = options.finalizer;
    this.#events = options.events;
    this.#staleAfterMs = options.staleAfterSeconds * 1000;
    this.#maxAttempts = options.maxAttempts;
    this.#clock = options.clock;
  }

  async sweep({ failed, holds }: SweepOptions = {}): Promise<SweepReport> {
    const report: SweepReport = { due: 0, begun: 0, stale: 0, resumed: 0, failed: 0, messages: 0 };
    const now = this.#clock.now();
    // A due deletion begins with one conditional write (SCHEDULED -> PENDING); the table's
    // stream hands it to the dispatcher. A cancel racing it wins or loses by its condition.
    // Each deletion is handled in isolation: one that throws is reported, and the next begun.
    const begins = await eachInIsolation(
      () => this.#index.due(now),
      { list: 'list due deletions', item: 'begin deletion', keys: deletionKeys },
      failed,
      async (due) => {
        report.due++;
        if (holds?.(due)) {
          report.held = (report.held ?? 0) + 1;
          return;
        }
        if ((await this.#deletions.begin(due)).status !== 'ok') return;
        report.begun++;
        failpoint('sweeper.after-begin');
      },
    );
    const cutoff = new Date(now.getTime() - this.#staleAfterMs);
    const takenOn = await eachInIsolation(
      () => this.#index.stale(cutoff),
      { list: 'list stale deletions', item: 'take on stale deletion', keys: deletionKeys },
      failed,
      (seen) => this.#takeOn(seen, report),
    );
    const errors = begins.failures + takenOn.failures;
    return errors > 0 ? { ...report, errors } : report;
  }

  /** A stale deletion: claimed, then resumed, or FAILED (Stalled) once its attempts are spent. */
  async #takeOn(seen: DeletionRecord, report: SweepReport): Promise<void> {
    report.stale++;
    // Stalled: as many resumes as attempts allowed, with no progress since the first; pages
    // counted since the last claim start the count again. The claim that gives the verdict
    // resumes nothing (it is no attempt), and the verdict stands once given, whatever a
    // straggler settles meanwhile.
    // Read once, before the claim: what the round has counted, and what a resume sends.
    const chains = seen.state === 'RUNNING' ? await collect(this.#chains.list(seen)) : [];
    const pagesDone = chains.reduce((pages, chain) => pages + chain.pagesDone, 0);
    const moved = seen.progressRound === seen.round && pagesDone > (seen.progressSeen ?? 0);
    const stalls = (moved ? 0 : (seen.stalls ?? 0)) + 1;
    const stalled = seen.stalledRound === seen.round || stalls >= this.#maxAttempts;
    const claim = await this.#deletions.claimStale(seen, !stalled, { stalls, pagesDone });
    if (claim.status !== 'ok') return;
    const claimed = claim.item;
    failpoint('sweeper.after-claim');
    if (stalled) {
      const reason = {
        code: 'Stalled',
        message: `no progress after ${this.#maxAttempts} attempts; retry it once the cause is fixed`,
      };
      if ((await this.#finalizer.fail(claimed, reason)) === 'failed') report.failed++;
      return;
    }
    this.#events.resumed(claimed, seen.updatedAt);
    report.messages += await this.#resume(claimed, chains);
    report.resumed++;
  }

  /** How many deletions wait out their grace window. */
  async scheduled(): Promise<number> {
    return this.#index.scheduled();
  }

  /**
   * The deletion open longest, with its age in seconds: open since its grace window ended (or it
   * was expedited), which is its request when it had none, or since it was last retried. A window
   * waited out is not open time, nor is the time a deletion sat FAILED before its retry.
   */
  async oldestOpen(): Promise<{ deletion: DeletionRecord; ageSeconds: number } | undefined> {
    const now = this.#clock.now();
    // ISO 8601 times in UTC: the later one sorts last.
    const openedAt = (deletion: DeletionRecord) =>
      [deletion.requestedAt, deletion.executeAfter, deletion.retriedAt ?? '']
        .sort()
        .at(-1) as string;
    // Every open deletion is in the sweep index; its sort key (last progress) is never ahead of
    // now by more than clock skew, so a cutoff a day ahead reads them all.
    let oldest: DeletionRecord | undefined;
    for await (const deletion of this.#index.stale(new Date(now.getTime() + 86_400_000))) {
      if (!oldest || openedAt(deletion) < openedAt(oldest)) oldest = deletion;
    }
    return oldest && { deletion: oldest, ageSeconds: secondsBetween(openedAt(oldest), now) };
  }

  /**
   * The claim's own stream record re-dispatches a PENDING deletion too; both are idempotent. A
   * RUNNING one is resumed from `chains`, its round's as read for the claim.
   */
  async #resume(deletion: DeletionRecord, chains: ChainRecord[]): Promise<number> {
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
    for (const chain of chains) {
      const open = Object.values(chain.open ?? {});
      messages.push(...open.map((page) => pageMessage(chain, page.page)));
      if (!chain.ended) messages.push(pageMessage(chain, chain.lastPage + 1));
      else if (open.length === 0 && !chain.settled) await this.#finalizer.settle(chain);
    }
    await this.#queue.send(messages);
    return messages.length;
  }
}
