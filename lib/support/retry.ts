/** Waiting and trying again: the one home of every retry loop in Lethe. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exponential backoff with full jitter, in milliseconds. */
export const backoff = (attempt: number, baseMs = 50, capMs = 2_000) =>
  Math.random() * Math.min(capMs, baseMs * 2 ** attempt);

export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly attempts: number;
  readonly baseMs: number;
  readonly capMs: number;
}

/** The policies Lethe retries with, by what it is waiting out. */
export const RETRY = {
  /** A conditional write that lost a race, a transaction conflict, unprocessed batch items. */
  contention: { attempts: 10, baseMs: 50, capMs: 2_000 },
  /** Keys DeleteObjects answered with a per-key SlowDown or 5xx, and SQS batch entries. */
  throttling: { attempts: 6, baseMs: 100, capMs: 5_000 },
} as const satisfies Record<string, RetryPolicy>;

export class RetriesExhaustedError extends Error {
  override readonly name = 'RetriesExhaustedError';
}

/**
 * Runs `attempt` until it reports `done`, at most `policy.attempts` times, backing off between
 * tries. `attempt` gets the try's index and returns `{ done: true, value }` or `{ done: false }`;
 * a throw ends the loop at once (only what the caller judged transient is tried again).
 */
export async function retry<T>(
  policy: RetryPolicy,
  attempt: (index: number) => Promise<{ done: true; value: T } | { done: false; why?: string }>,
  wait: (ms: number) => Promise<void> = sleep,
): Promise<T> {
  let why: string | undefined;
  for (let index = 0; index < policy.attempts; index++) {
    if (index > 0) await wait(backoff(index, policy.baseMs, policy.capMs));
    const result = await attempt(index);
    if (result.done) return result.value;
    why = result.why;
  }
  throw new RetriesExhaustedError(
    `gave up after ${policy.attempts} attempts${why ? `: ${why}` : ''}`,
  );
}
