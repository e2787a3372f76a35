import { type DeletionReceipt, hasEnded } from '../core/index.ts';
import { ApiError, type LetheClient, UnreachableError } from './client.ts';
import type { ProgressReporter } from './progress.ts';

/** How often a wait reads, how long it bears failures, and what ends it early. */
export interface PollPacing {
  readonly intervalMs: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Failed reads in a row (unreachable, 5xx) tolerated before giving up. @default 5 */
  readonly maxFailedReads?: number;
  /** Aborted on Ctrl-C: the wait ends at once. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Milliseconds since the epoch. With it, a SCHEDULED thing is read only every
   * `scheduledReadMs` until its `executeAfter` (the countdown still ticks every interval);
   * without it, every interval.
   */
  readonly wallNow?: () => number;
  /** @default 10000 */
  readonly scheduledReadMs?: number;
}

export interface WaitOptions extends PollPacing {
  readonly client: Pick<LetheClient, 'getDeletion'>;
  /** The receipt the DELETE (or retry, or expedite) answered. */
  readonly receipt: DeletionReceipt;
  readonly reporter?: Pick<ProgressReporter, 'update' | 'finish'> | undefined;
}

/** Ctrl-C while waiting: the deletion goes on, as `receipt` (the last one read) shows it. */
export class WaitInterrupted extends Error {
  override readonly name = 'WaitInterrupted';
  constructor(readonly receipt: DeletionReceipt) {
    super(`stopped waiting for deletion ${receipt.deletionId}`);
  }
}

/** The total, if the receipt reports one (today's API does not: then there is no ETA). */
const totalOf = (receipt: DeletionReceipt) => {
  const total = (receipt as { objectsTotal?: unknown }).objectsTotal;
  return typeof total === 'number' ? total : undefined;
};

/**
 * Reads the receipt until the deletion has ended (COMPLETED, FAILED or CANCELLED), showing a
 * countdown while it is SCHEDULED and its progress once it runs.
 */
export async function waitForDeletion(options: WaitOptions): Promise<DeletionReceipt> {
  const last = { current: options.receipt };
  try {
    return await pollUntilEnded(
      {
        ...options,
        read: async (receipt, signal) =>
          (await options.client.getDeletion(receipt.tenant, receipt.deletionId, signal)).body,
        hasEnded: (receipt) => hasEnded(receipt.state),
        show: (receipt) =>
          options.reporter?.update({
            state: receipt.state,
            objectsDeleted: receipt.objectsDeleted,
            total: totalOf(receipt),
            deletionId: receipt.deletionId,
            executeAfter: receipt.executeAfter,
          }),
      },
      last,
    );
  } catch (error) {
    if (options.signal?.aborted) throw new WaitInterrupted(last.current);
    throw error;
  } finally {
    options.reporter?.finish();
  }
}

/** What a wait polls: something with a state, and a start that may lie ahead. */
interface Watched {
  readonly state: string;
  readonly executeAfter: string;
}

/** How to poll one kind of thing (a deletion's receipt, an offboarding). */
export interface PollOptions<T extends Watched> extends PollPacing {
  readonly read: (current: T, signal?: AbortSignal) => Promise<T>;
  readonly hasEnded: (current: T) => boolean;
  readonly show: (current: T) => void;
}

/**
 * Shows `last.current` and reads it afresh every interval until it has ended; `last.current`
 * always holds the latest read (what an interrupted wait reports). Passing failures (no answer,
 * a 5xx) are tolerated a few times in a row; Ctrl-C ends the wait at once.
 */
export async function pollUntilEnded<T extends Watched>(
  options: PollOptions<T>,
  last: { current: T },
): Promise<T> {
  const { intervalMs, signal } = options;
  const maxFailedReads = options.maxFailedReads ?? 5;
  const readEvery = Math.max(1, Math.round((options.scheduledReadMs ?? 10_000) / intervalMs));
  let failedReads = 0;
  let ticks = 0;
  for (;;) {
    // Every answer read here is Lethe's, with a state (the client's shapes, lib/cli/shapes.ts).
    const current = last.current;
    options.show(current);
    if (options.hasEnded(current)) return current;
    await untilAborted(options.sleep(intervalMs, signal), signal);
    if (waitingOut(current, options.wallNow) && ++ticks % readEvery !== 0) continue;
    try {
      last.current = await untilAborted(options.read(current, signal), signal);
      failedReads = 0;
    } catch (error) {
      if (signal?.aborted || !isPassing(error) || ++failedReads > maxFailedReads) throw error;
    }
  }
}

/** SCHEDULED with its start still ahead: no need to read it at every tick. */
function waitingOut(current: Watched, wallNow: (() => number) | undefined): boolean {
  return (
    current.state === 'SCHEDULED' &&
    wallNow !== undefined &&
    Date.parse(current.executeAfter) > wallNow()
  );
}

/** A failed read that the next read may not meet: no answer at all, or a 5xx. */
export const isPassing = (error: unknown): boolean =>
  error instanceof UnreachableError || (error instanceof ApiError && error.status >= 500);

/** `work`, or a rejection as soon as `signal` aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('aborted'));
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
