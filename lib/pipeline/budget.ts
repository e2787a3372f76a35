import type { Clock } from '../core/index.ts';
import { MAX_DELAY_SECONDS } from '../queue/index.ts';
import type { BudgetStore } from '../store/index.ts';
import { sleep as realSleep } from '../support/index.ts';

export interface KeyBudgetOptions {
  readonly budgets: Pick<BudgetStore, 'admit' | 'refund'>;
  /** Keys per second for the whole pipeline, per bucket (`LETHE_MAX_KEYS_PER_SECOND`). */
  readonly keysPerSecond: number;
  /** Keys one admission asks for: a page. */
  readonly pageSize: number;
  readonly clock: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The longest a page's message is sent back for, however long the budget asks: the fence's
   * interval, so a page waiting its turn comes back and marks its deletion alive before the
   * sweeper takes it for stalled (throttling is never a failure). @default SQS's longest delay
   */
  readonly longestWaitSeconds?: number;
}

/**
 * Waits shorter than this, all of a page's together, are slept in the invocation; longer ones
 * go back to the queue. All together: under contention each look can find the room just taken
 * by another worker and a new short wait, and sleeping each out would keep an invocation idle
 * without end (up to its timeout, and the message back only after its visibility timeout).
 */
const SLEEP_BELOW_MS = 1000;

/**
 * The bucket's key budget as a worker takes from it before listing a page: room for a whole
 * page at once, or the seconds after which to come back. A short wait is slept; a longer one
 * becomes a delay of the page's message, so no invocation sits idle for a budget.
 */
export class KeyBudget {
  readonly #budgets: KeyBudgetOptions['budgets'];
  readonly #rate: number;
  readonly #page: number;
  readonly #burst: number;
  readonly #clock: Clock;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #longestWait: number;

  constructor(options: KeyBudgetOptions) {
    this.#budgets = options.budgets;
    this.#rate = options.keysPerSecond;
    this.#page = options.pageSize;
    // A page must fit, or a budget below a page a second would admit nothing.
    this.#burst = Math.max(options.pageSize, options.keysPerSecond);
    this.#clock = options.clock;
    this.#sleep = options.sleep ?? realSleep;
    this.#longestWait = Math.min(
      MAX_DELAY_SECONDS,
      options.longestWaitSeconds ?? MAX_DELAY_SECONDS,
    );
  }

  /** A page listed `listed` keys of the page's worth it took: the rest goes back. */
  async giveBack(bucket: string, listed: number): Promise<void> {
    if (listed < this.#page) await this.#budgets.refund(bucket, this.#page - listed, this.#rate);
  }

  /** 0 when the page may go ahead now; otherwise the seconds to delay its message by. */
  async take(bucket: string): Promise<number> {
    for (let slept = 0; ; ) {
      const { admitted, waitMs } = await this.#budgets.admit(
        bucket,
        this.#page,
        this.#rate,
        this.#burst,
        this.#clock.now().getTime(),
      );
      if (admitted) return 0;
      if (slept + waitMs >= SLEEP_BELOW_MS) {
        return Math.min(this.#longestWait, Math.ceil(waitMs / 1000));
      }
      await this.#sleep(waitMs);
      slept += waitMs;
    }
  }
}
