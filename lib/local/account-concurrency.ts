import { backoff, sleep } from '../support/index.ts';

/** Ends an invocation's hold on its share of the account's concurrency. */
export type Release = () => void;

/**
 * The account's Lambda concurrency (opt-in): every function's invocations share one pool, and
 * an invoke above it is throttled, as Lambda throttles it. The caller retries with backoff as
 * the invoking service does: an SQS event source until the batch's visibility timeout runs
 * out (the messages then come back, their receive count one higher), a stream event source or
 * an asynchronous invoke until it gets through.
 */
export class AccountConcurrency {
  readonly limit: number;
  #running = 0;
  /** Invokes throttled so far (each retry counted): what the Throttles metric would show. */
  throttles = 0;
  /** The most invocations that ran at once. */
  peak = 0;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new Error(`account concurrency must be a whole number of at least 1 (got ${limit})`);
    }
    this.limit = limit;
  }

  get running() {
    return this.#running;
  }

  /** A slot now, or undefined: the invoke is throttled. */
  tryAcquire(): Release | undefined {
    if (this.#running >= this.limit) {
      this.throttles++;
      return undefined;
    }
    this.#running++;
    this.peak = Math.max(this.peak, this.#running);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
    };
  }

  /**
   * A slot, retrying a throttled invoke with backoff; undefined once `until` (epoch ms) has
   * passed or `giveUp` says so, without one.
   */
  async acquire(
    options: { until?: number; giveUp?: () => boolean } = {},
  ): Promise<Release | undefined> {
    for (let attempt = 0; ; attempt++) {
      const release = this.tryAcquire();
      if (release) return release;
      if (options.giveUp?.()) return undefined;
      const left = (options.until ?? Number.POSITIVE_INFINITY) - Date.now();
      if (left <= 0) return undefined;
      await sleep(Math.min(backoff(attempt, 20, 500), left));
    }
  }

  /**
   * An invoke that waits for its slot, as a stream or asynchronous invoke is retried; once
   * `giveUp` says so (the runtime stopping) it fails with Lambda's throttling error instead.
   */
  gate<E, R>(invoke: (event: E) => Promise<R>, giveUp: () => boolean): (event: E) => Promise<R> {
    return async (event) => {
      const release = await this.acquire({ giveUp });
      if (!release) throw new TooManyRequestsError();
      try {
        return await invoke(event);
      } finally {
        release();
      }
    };
  }
}

/** Lambda's answer to an invoke above the account's concurrency. */
export class TooManyRequestsError extends Error {
  constructor() {
    super('Rate Exceeded.');
    this.name = 'TooManyRequestsException';
  }
}
