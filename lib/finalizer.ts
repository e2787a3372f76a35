import type { S3Client } from '@aws-sdk/client-s3';
import { failpoint } from './failpoints.ts';
import { fenceOf } from './messages.ts';
import type { DeletionRecord } from './model.ts';
import type { ProgressStore } from './progress.ts';
import { whatIsLeft } from './version-pager.ts';
import type { WorkQueue } from './work-queue.ts';

export interface FinalizerOptions {
  readonly store: ProgressStore;
  readonly s3: S3Client;
  readonly queue: WorkQueue;
  /**
   * The longest an admitted ingest may take to land its object. Verification waits for
   * ingests still in flight, but never longer than this after the last one was admitted.
   */
  readonly ingestGraceSeconds: number;
  /** Rounds of listing a location afresh before giving up on it ever being empty. */
  readonly maxRounds?: number;
  readonly now?: () => Date;
}

/** Seconds between looks at an ingest that was still in flight when a round ended. */
const RECHECK_SECONDS = 2;

export type FinalizeOutcome =
  | 'not-ready'
  | 'delayed'
  | 'completed'
  | 'failed'
  | 'next-round'
  | 'claimed'
  | 'fenced';

/** True when every chain of the round has ended and every listed page is recorded. */
export const isReadyToVerify = (deletion: DeletionRecord) =>
  deletion.state === 'RUNNING' && deletion.chainsSettled >= deletion.chainsTotal;

/**
 * Verify, then finish: a deletion is COMPLETED only when a listing of its whole location comes
 * back empty. Leftovers (keys beside the child prefixes, late writes) start another round;
 * keys that could not be deleted end it as FAILED.
 */
export class Finalizer {
  readonly #store: ProgressStore;
  readonly #s3: S3Client;
  readonly #queue: WorkQueue;
  readonly #graceMs: number;
  readonly #maxRounds: number;
  readonly #now: () => Date;

  constructor(options: FinalizerOptions) {
    this.#store = options.store;
    this.#s3 = options.s3;
    this.#queue = options.queue;
    this.#graceMs = options.ingestGraceSeconds * 1000;
    this.#maxRounds = options.maxRounds ?? 5;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Re-reads the deletion and, if its round is done, finalizes it unless another worker has
   * claimed that already (the last chains of a round often settle together).
   */
  async finalizeIfReady(deletion: DeletionRecord): Promise<FinalizeOutcome> {
    const current = await this.#store.getDeletion(deletion.tenant, deletion.deletionId);
    if (!current || current.round !== deletion.round) return 'fenced';
    if (!isReadyToVerify(current)) return 'not-ready';
    if (!(await this.#store.claimVerification(current))) return 'claimed';
    return this.finalize(current);
  }

  async finalize(deletion: DeletionRecord): Promise<FinalizeOutcome> {
    if (!isReadyToVerify(deletion)) return 'not-ready';
    const waitMs = await this.#ingestWait(deletion);
    if (waitMs > 0) {
      // Look again soon: the ingest usually lands long before the grace runs out.
      const delaySeconds = Math.min(waitMs / 1000, RECHECK_SECONDS);
      await this.#queue.send([{ ...fenceOf(deletion), type: 'finalize' }], delaySeconds);
      return 'delayed';
    }
    failpoint('finalize.before-verify');
    // Through versions: a versioned bucket keeps data that a listing of objects cannot see.
    const left = await whatIsLeft(this.#s3, deletion.bucket, deletion.prefix);
    // The receipt's totals, from every chain of every round.
    const final = { ...deletion, ...(await this.#store.totals(deletion)) };
    if (left.empty) {
      failpoint('finalize.after-verify');
      return (await this.#store.complete(final)) === 'recorded' ? 'completed' : 'fenced';
    }
    if (final.failedObjects > 0) {
      return (await this.#store.fail(final)) === 'recorded' ? 'failed' : 'fenced';
    }
    if (left.versioned && !deletion.versioned) {
      // The bucket keeps versions after all: go again, version by version.
      const outcome = await this.#store.nextRound(deletion, true);
      return outcome === 'recorded' ? 'next-round' : 'fenced';
    }
    if (deletion.round >= this.#maxRounds) {
      const reason = {
        code: 'LocationNotEmpty',
        message: `objects kept appearing under the location after ${deletion.round} rounds, e.g. ${left.key}`,
      };
      return (await this.#store.fail(final, reason)) === 'recorded' ? 'failed' : 'fenced';
    }
    return (await this.#store.nextRound(deletion)) === 'recorded' ? 'next-round' : 'fenced';
  }

  /** Milliseconds until no ingest admitted before the tombstone can still be writing. */
  async #ingestWait(deletion: DeletionRecord): Promise<number> {
    const stream = await this.#store.getStream(deletion.tenant, deletion.stream);
    if (stream?.deletionId !== deletion.deletionId || !stream.inflightIngests) return 0;
    return (
      Date.parse(stream.lastIngestAt ?? deletion.requestedAt) +
      this.#graceMs -
      this.#now().getTime()
    );
  }
}
