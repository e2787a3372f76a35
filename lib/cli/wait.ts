import { type DeletionReceipt, hasEnded } from '../core/index.ts';
import { ApiError, type LetheClient, UnreachableError } from './client.ts';
import type { ProgressReporter } from './progress.ts';

export interface WaitOptions {
  readonly client: Pick<LetheClient, 'getDeletion'>;
  /** The receipt the DELETE (or retry, or expedite) answered. */
  readonly receipt: DeletionReceipt;
  readonly intervalMs: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly reporter?: Pick<ProgressReporter, 'update' | 'finish'> | undefined;
  /** Failed reads in a row (unreachable, 5xx) tolerated before giving up. @default 5 */
  readonly maxFailedReads?: number;
  /** Aborted on Ctrl-C: the wait ends with a WaitInterrupted. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Milliseconds since the epoch. With it, a SCHEDULED receipt is read only every
   * `scheduledReadMs` until its `executeAfter` (the countdown still ticks every interval);
   * without it, every interval.
   */
  readonly wallNow?: () => number;
  /** @default 10000 */
  readonly scheduledReadMs?: number;
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
  const last = { receipt: options.receipt };
  try {
    return await poll(options, last);
  } catch (error) {
    if (options.signal?.aborted) throw new WaitInterrupted(last.receipt);
    throw error;
  } finally {
    options.reporter?.finish();
  }
}

async function poll(options: WaitOptions, last: { receipt: DeletionReceipt }) {
  const { client, intervalMs, reporter, signal } = options;
  const maxFailedReads = options.maxFailedReads ?? 5;
  const readEvery = Math.max(1, Math.round((options.scheduledReadMs ?? 10_000) / intervalMs));
  let failedReads = 0;
  let ticks = 0;
  for (;;) {
    const receipt = last.receipt;
    reporter?.update({
      state: receipt.state,
      objectsDeleted: receipt.objectsDeleted,
      total: totalOf(receipt),
      deletionId: receipt.deletionId,
      executeAfter: receipt.executeAfter,
    });
    if (hasEnded(receipt.state)) return receipt;
    await untilAborted(options.sleep(intervalMs, signal), signal);
    if (waitingOut(receipt, options.wallNow) && ++ticks % readEvery !== 0) continue;
    try {
      const read = client.getDeletion(receipt.tenant, receipt.deletionId, signal);
      last.receipt = (await untilAborted(read, signal)).body;
      failedReads = 0;
    } catch (error) {
      if (signal?.aborted || !isPassing(error) || ++failedReads > maxFailedReads) throw error;
    }
  }
}

/** A SCHEDULED deletion whose start is still ahead: no need to read it at every tick. */
function waitingOut(receipt: DeletionReceipt, wallNow: (() => number) | undefined): boolean {
  return (
    receipt.state === 'SCHEDULED' &&
    wallNow !== undefined &&
    Date.parse(receipt.executeAfter) > wallNow()
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
