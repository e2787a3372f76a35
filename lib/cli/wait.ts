import type { DeletionReceipt } from '../core/index.ts';
import { ApiError, type LetheClient, UnreachableError } from './client.ts';
import type { ProgressReporter } from './progress.ts';

export interface WaitOptions {
  readonly client: Pick<LetheClient, 'getDeletion'>;
  /** The receipt the DELETE (or retry) answered. */
  readonly receipt: DeletionReceipt;
  readonly intervalMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly reporter?: ProgressReporter | undefined;
  /** Failed reads in a row (unreachable, 5xx) tolerated before giving up. @default 5 */
  readonly maxFailedReads?: number;
}

const finished = (receipt: DeletionReceipt) =>
  receipt.state === 'COMPLETED' || receipt.state === 'FAILED';

/** The total, if the receipt reports one (older APIs do not: then there is no ETA). */
const totalOf = (receipt: DeletionReceipt) => {
  const total = (receipt as { objectsTotal?: unknown }).objectsTotal;
  return typeof total === 'number' ? total : undefined;
};

/** Reads the receipt until the deletion is COMPLETED or FAILED, showing progress on the way. */
export async function waitForDeletion(options: WaitOptions): Promise<DeletionReceipt> {
  const { client, intervalMs, sleep, reporter } = options;
  const maxFailedReads = options.maxFailedReads ?? 5;
  let receipt = options.receipt;
  let failedReads = 0;
  for (;;) {
    reporter?.update({
      state: receipt.state,
      objectsDeleted: receipt.objectsDeleted,
      total: totalOf(receipt),
    });
    if (finished(receipt)) break;
    await sleep(intervalMs);
    try {
      receipt = (await client.getDeletion(receipt.tenant, receipt.deletionId)).body;
      failedReads = 0;
    } catch (error) {
      const passing =
        error instanceof UnreachableError || (error instanceof ApiError && error.status >= 500);
      if (!passing || ++failedReads > maxFailedReads) {
        reporter?.finish();
        throw error;
      }
    }
  }
  reporter?.finish();
  return receipt;
}
