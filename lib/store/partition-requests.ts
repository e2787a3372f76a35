import {
  type Clock,
  DeletionNotRetryableError,
  type DeletionRecord,
  hasEnded,
  newDeletion,
  notRetryable,
  PartitionDeletionInProgressError,
  StreamNotFoundError,
  type StreamRecord,
} from '../core/index.ts';
import { RETRY, retry } from '../support/index.ts';
import {
  all,
  atGeneration,
  deletionHasEnded,
  deletionMay,
  equals,
  streamMay,
} from './conditions.ts';
import { deletionChanges as changes } from './deletion-changes.ts';
import type { DeletionRequest } from './deletion-store.ts';
import { keys } from './layout.ts';
import type { RetentionRun } from './stream-changes.ts';
import type { StreamStore } from './stream-store.ts';
import type { Change, Table, TransactItem } from './table.ts';

/** What DeletionStore lends its requests (this file's, and stream-requests.ts'). */
export interface RequestContext {
  readonly table: Table;
  readonly streams: Pick<
    StreamStore,
    'find' | 'refusal' | 'claimPartitions' | 'claimRetentionRun' | 'tombstone'
  >;
  readonly get: (deletionId: string) => Promise<DeletionRecord | undefined>;
  readonly newId: () => string;
  readonly clock: Clock;
}

/**
 * A retention run's request found the stream's policy removed or changed since the sweep read
 * it (the partitions it computed are no longer the policy's), or the day's run claimed already
 * by another sweep: nothing is requested.
 */
export class PolicyChangedError extends Error {
  constructor(tenant: string, stream: string, why = 'its policy changed since it was read') {
    super(`the retention run of ${tenant}/${stream} is not for this sweep: ${why}`);
    this.name = 'PolicyChangedError';
  }
}

/**
 * DeletionStore's request of a partition deletion: one at a time per stream (a repeat with the
 * same cutoff answers the one under way, another cutoff is 409), the deletion record and the
 * stream's claim in one transaction; the stream stays ACTIVE and writable throughout. A
 * retention run's (`run`) claims the day's run in that same transaction.
 */
export function requestPartitions(
  context: RequestContext,
  request: { tenant: string; stream: string; before: string; run?: RetentionRun | undefined },
): Promise<DeletionRequest> {
  const { table, streams, clock } = context;
  const { tenant, stream, before, run } = request;
  return retry<DeletionRequest>(RETRY.contention, async () => {
    const current = await streams.find(tenant, stream);
    if (!current || current.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
    if (current.state !== 'ACTIVE') throw streams.refusal(current);
    if (run && current.retentionDays !== run.days) throw new PolicyChangedError(tenant, stream);
    if (run && (current.retentionRunOn ?? '') >= run.today) {
      throw new PolicyChangedError(tenant, stream, `the run of ${run.today} was claimed already`);
    }
    const held = await heldPartitions(current, context.get);
    if (held && !hasEnded(held.state)) {
      if (held.before !== before) throw inProgress(current, held);
      // The day's run is the one under way: claimed, so that it is not requested once more.
      if (run) await streams.claimRetentionRun(current, run.days, run.today);
      return { done: true, value: { created: false, deletion: held } };
    }
    const now = clock.now().toISOString();
    const deletion: DeletionRecord = { ...newDeletion(current, context.newId(), now), before };
    const result = await table.transact([
      streams.claimPartitions(current, deletion, run),
      table.putItem(
        {
          ...keys.deletion(tenant, deletion.deletionId),
          ...deletion,
          ...changes.indexKeys(deletion),
        },
        deletionMay('request'),
      ),
      // As the tombstone: a FAILED holder retried meanwhile and this claim cannot both win.
      ...(held ? [stillEnded(table, held)] : []),
    ]);
    if (!result.ok) return { done: false, why: `partitions of ${tenant}/${stream}: lost a race` };
    return { done: true, value: { created: true, deletion } };
  });
}

/**
 * The partition deletion a stream holds, if any, read before a new deletion of the stream
 * (whole, or of other partitions): one under way refuses it (`inProgress`), since two
 * deletions listing the same keys at once would both count them; one that ended is replaced,
 * on the condition that it has `stillEnded`.
 */
export async function heldPartitions(
  current: StreamRecord,
  get: (deletionId: string) => Promise<DeletionRecord | undefined>,
): Promise<DeletionRecord | undefined> {
  return current.partitionDeletionId ? get(current.partitionDeletionId) : undefined;
}

/** 409 PartitionDeletionInProgress: the stream's partition deletion `held` is under way. */
export const inProgress = (current: StreamRecord, held: DeletionRecord) =>
  new PartitionDeletionInProgressError(
    `${current.tenant}/${current.stream}`,
    held.deletionId,
    held.before,
  );

/**
 * A new deletion's check that the partition deletion it read has still ended: a FAILED one
 * retried meanwhile makes the new deletion lose, as the new deletion makes that retry lose.
 */
export const stillEnded = (table: Table, held: DeletionRecord): TransactItem =>
  table.checkItem(keys.deletion(held.tenant, held.deletionId), deletionHasEnded);

/**
 * The stream's part of retrying a FAILED partition deletion: it must still hold it, ACTIVE at
 * its generation. A deletion of the whole stream, or a later partition deletion, has taken
 * over its keys since, and runs them itself.
 */
export function stillHeld(table: Table, deletion: DeletionRecord): TransactItem {
  return table.checkItem(
    keys.stream(deletion.tenant, deletion.stream),
    all(
      streamMay('plan'),
      atGeneration(deletion.generation),
      equals('partitionDeletionId', deletion.deletionId),
    ),
  );
}

/**
 * DeletionStore's retry of a partition deletion: a FAILED one starts again only while its
 * stream still holds it (`stillHeld`), in one transaction with its new round.
 */
export async function retryPartitions(
  table: Table,
  seen: DeletionRecord,
  change: Change,
  reread: () => Promise<DeletionRecord | undefined>,
): Promise<DeletionRecord> {
  if (seen.state === 'COMPLETED' || seen.state === 'CANCELLED') {
    throw notRetryable(seen.deletionId, seen.state);
  }
  if (seen.state !== 'FAILED') return seen;
  const result = await table.transact([
    table.updateItem(keys.deletion(seen.tenant, seen.deletionId), change),
    stillHeld(table, seen),
  ]);
  if (!result.ok && result.failed.includes(1)) {
    throw new DeletionNotRetryableError(
      `partition deletion ${seen.deletionId} cannot run again: its stream has since been deleted, or another partition deletion took its place`,
    );
  }
  // Retried, by this request or by another at the same moment: it runs again either way.
  return (await reread()) ?? seen;
}
