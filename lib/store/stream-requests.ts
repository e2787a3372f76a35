import { hasEnded, hasIngestInFlight, newDeletion, StreamNotFoundError } from '../core/index.ts';
import { failpoint, RETRY, retry } from '../support/index.ts';
import { deletionMay } from './conditions.ts';
import { deletionChanges as changes } from './deletion-changes.ts';
import type { DeletionRequest } from './deletion-store.ts';
import { keys } from './layout.ts';
import type { TakenIn } from './offboarding-store.ts';
import {
  heldPartitions,
  inProgress,
  type RequestContext,
  stillEnded,
} from './partition-requests.ts';

/**
 * DeletionStore's request of a whole stream's deletion: the stream DELETING (the tombstone)
 * and the deletion record in one transaction, decided by their conditions; a repeat answers
 * the deletion under way. Refused while a partition deletion of the stream runs.
 */
export function requestStream(
  context: RequestContext,
  request: { tenant: string; stream: string; graceSeconds: number; takenIn?: TakenIn | undefined },
): Promise<DeletionRequest> {
  const { table, streams, clock } = context;
  const { tenant, stream, graceSeconds, takenIn } = request;
  return retry<DeletionRequest>(RETRY.contention, async () => {
    const current = await streams.find(tenant, stream);
    if (!current || current.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
    if (current.state === 'DELETING' && current.deletionId) {
      const deletion = await context.get(current.deletionId);
      // Cancelled or completed since the stream was read: that read is stale (each frees the
      // stream in the same transaction), and this request is not a repeat of it.
      if (deletion?.state === 'CANCELLED' || deletion?.state === 'COMPLETED') {
        return { done: false, why: `the deletion of ${tenant}/${stream} ended meanwhile` };
      }
      if (deletion) return { done: true, value: { created: false, deletion } };
      throw streams.refusal(current);
    }
    const held = await heldPartitions(current, context.get);
    if (held && !hasEnded(held.state)) throw inProgress(current, held);
    const now = clock.now();
    const executeAfter = new Date(now.getTime() + graceSeconds * 1000).toISOString();
    const deletion = newDeletion(current, context.newId(), now.toISOString(), executeAfter);
    // No ingest in flight when read: the tombstone is conditioned on it staying so.
    if (!hasIngestInFlight(current)) deletion.ingestsSettled = true;
    if (takenIn) deletion.offboardingId = takenIn.offboardingId;
    const parts = [
      streams.tombstone(current, deletion),
      table.putItem(
        {
          ...keys.deletion(tenant, deletion.deletionId),
          ...deletion,
          ...changes.indexKeys(deletion),
        },
        deletionMay(deletion.state === 'SCHEDULED' ? 'schedule' : 'request'),
      ),
      ...(held ? [stillEnded(table, held)] : []),
    ];
    const linked = takenIn?.linkItems(deletion) ?? [];
    const result = await table.transact([...parts, ...linked]);
    // The offboarding's link refused: no race to retry, the stream was taken in before (or the
    // offboarding no longer runs).
    if (!result.ok && takenIn && result.failed.some((index) => index >= parts.length)) {
      throw new TakenInAlreadyError(tenant, stream, takenIn.offboardingId);
    }
    if (!result.ok) return { done: false, why: `delete ${tenant}/${stream} lost a race` };
    failpoint('api.after-tombstone');
    return { done: true, value: { created: true, deletion } };
  });
}

/**
 * An offboarding asked for a deletion of a stream it has taken in already: an earlier run of
 * its step linked it and the deletion was cancelled since (the stream is ACTIVE again), or, for
 * a stream taken in again, its link has moved on. Nothing was written; the link stands, and the
 * sweeper takes the stream in again from it. Also when the offboarding is no longer RUNNING (it
 * was cancelled after the step or sweep read it): it takes nothing in.
 */
export class TakenInAlreadyError extends Error {
  override readonly name = 'TakenInAlreadyError';
  constructor(tenant: string, stream: string, offboardingId: string) {
    super(`${tenant}/${stream} was taken in by offboarding ${offboardingId} already`);
  }
}
