import type { ChainRecord, Clock } from '../core/index.ts';
import type { Deletions } from './ports.ts';

export interface DeletionFenceOptions {
  readonly deletions: Deletions<'heartbeat'>;
  /** Seconds between marks of progress (and looks at the deletion's state). */
  readonly intervalSeconds: number;
  readonly clock: Clock;
  /** Deletions remembered at once. @default 1000 */
  readonly capacity?: number;
}

interface Seen {
  round: number;
  running: boolean;
  at: number;
}

/**
 * Whether a chain's deletion still runs its round, learned at most once per interval per
 * process (pages that ask at once share one look), by the same conditional write that marks
 * progress for the sweeper (a write of the deletion item, refused or not): a worker reads
 * only its chain per page, and all the workers of a deletion together mark it about once per
 * interval. Work for a deletion that left its round is dropped within one interval; it could
 * only ever touch keys inside the deletion's own location.
 */
export class DeletionFence {
  readonly #deletions: Deletions<'heartbeat'>;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #capacity: number;
  readonly #seen = new Map<string, Seen>();
  /** Looks under way, by deletion and round: the pages that ask at once share one write. */
  readonly #asking = new Map<string, Promise<boolean>>();

  constructor(options: DeletionFenceOptions) {
    this.#deletions = options.deletions;
    this.#intervalMs = options.intervalSeconds * 1000;
    this.#clock = options.clock;
    this.#capacity = options.capacity ?? 1000;
  }

  async isRunning(
    chain: Pick<ChainRecord, 'tenant' | 'deletionId' | 'round' | 'generation' | 'registeredAt'>,
  ) {
    const now = this.#clock.now().getTime();
    // Registered less than an interval ago, while its deletion was starting this round: a page
    // is only sent once the round has started, and no round ends within an interval of its start
    // while a chain of it is open (verification waits for every chain; the sweeper waits longer
    // than an interval). As good as a look; the start marked progress. A small deletion's one
    // page asks nothing.
    if (chain.registeredAt !== undefined && now - chain.registeredAt < this.#intervalMs) {
      return true;
    }
    const seen = this.#seen.get(chain.deletionId);
    if (seen && seen.round === chain.round && now - seen.at < this.#intervalMs) {
      return seen.running;
    }
    const key = `${chain.deletionId}#${chain.round}#${chain.generation}`;
    return this.#asking.get(key) ?? this.#ask(chain, now, key);
  }

  #ask(
    chain: Pick<ChainRecord, 'tenant' | 'deletionId' | 'round' | 'generation'>,
    now: number,
    key: string,
  ) {
    const asking = (async () => {
      try {
        const outcome = await this.#deletions.heartbeat(chain, new Date(now - this.#intervalMs));
        const current = outcome.status === 'ok' ? outcome.item : outcome.current;
        const running =
          current?.state === 'RUNNING' &&
          current.round === chain.round &&
          current.generation === chain.generation;
        this.#remember(chain.deletionId, { round: chain.round, running, at: now });
        return running;
      } finally {
        this.#asking.delete(key);
      }
    })();
    this.#asking.set(key, asking);
    return asking;
  }

  #remember(deletionId: string, seen: Seen) {
    this.#seen.delete(deletionId);
    this.#seen.set(deletionId, seen);
    // Oldest first: a Map iterates in insertion order.
    for (const key of this.#seen.keys()) {
      if (this.#seen.size <= this.#capacity) break;
      this.#seen.delete(key);
    }
  }
}
