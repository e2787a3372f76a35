import type { DeletionRecord } from './model.ts';
import { count, currentLogger, keysOf, learn, sample } from './observability.ts';
import { type ProgressOptions, ProgressStore, type WriteOutcome } from './progress.ts';

const secondsBetween = (from: string, to: Date) =>
  Math.max(0, (to.getTime() - Date.parse(from)) / 1000);

/**
 * The progress store, reporting every state change of a deletion to the invocation that made
 * it: a deletion ends (COMPLETED or FAILED) exactly once, in a conditional write, wherever it
 * happens (worker, dispatcher, sweeper), so these counts are exact.
 */
export class ObservedProgressStore extends ProgressStore {
  readonly #now: () => Date;

  constructor(options: ProgressOptions) {
    super(options);
    this.#now = options.now ?? (() => new Date());
  }

  override async getDeletion(tenant: string, deletionId: string) {
    const deletion = await super.getDeletion(tenant, deletionId);
    if (deletion) learn(deletion);
    return deletion;
  }

  override async complete(deletion: DeletionRecord): Promise<WriteOutcome> {
    const outcome = await super.complete(deletion);
    if (outcome === 'recorded') {
      const seconds = secondsBetween(deletion.requestedAt, this.#now());
      count('deletionsCompleted', 1);
      sample('deletionDuration', seconds);
      currentLogger()?.info('deletion completed', {
        ...keysOf(deletion),
        objectsDeleted: deletion.objectsDeleted,
        bytesDeleted: deletion.bytesDeleted,
        durationSeconds: seconds,
      });
    }
    return outcome;
  }

  override async fail(...args: Parameters<ProgressStore['fail']>): Promise<WriteOutcome> {
    const outcome = await super.fail(...args);
    const [deletion, reason] = args;
    if (outcome === 'recorded') {
      count('deletionsFailed', 1);
      currentLogger()?.warn('deletion failed', {
        ...keysOf(deletion),
        failedObjects: deletion.failedObjects,
        ...(reason ? { reason } : {}),
      });
    }
    return outcome;
  }

  override async claimStale(deletion: DeletionRecord) {
    const claimed = await super.claimStale(deletion);
    if (claimed) {
      currentLogger()?.warn('resuming a stalled deletion', {
        ...keysOf(claimed),
        state: claimed.state,
        attempts: claimed.attempts,
        lastProgress: deletion.updatedAt,
      });
    }
    return claimed;
  }
}

/** The open (PENDING or RUNNING) deletion requested longest ago, with its age in seconds. */
export async function oldestOpenDeletion(store: ProgressStore, now: Date) {
  // Every open deletion is in the sweep index; its sort key (last progress) is never ahead of
  // now by more than clock skew, so a cutoff a day ahead reads them all.
  const cutoff = new Date(now.getTime() + 86_400_000);
  let oldest: DeletionRecord | undefined;
  for await (const deletion of store.stale(cutoff)) {
    if (!oldest || deletion.requestedAt < oldest.requestedAt) oldest = deletion;
  }
  return oldest && { deletion: oldest, ageSeconds: secondsBetween(oldest.requestedAt, now) };
}
