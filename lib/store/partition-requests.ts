import {
  type Clock,
  type DeletionRecord,
  hasEnded,
  newDeletion,
  PartitionDeletionInProgressError,
  StreamNotFoundError,
} from '../core/index.ts';
import { RETRY, retry } from '../support/index.ts';
import { deletionMay } from './conditions.ts';
import { deletionChanges as changes } from './deletion-changes.ts';
import type { DeletionRequest } from './deletion-store.ts';
import { keys } from './layout.ts';
import type { StreamStore } from './stream-store.ts';
import type { Table } from './table.ts';

export interface PartitionRequestContext {
  readonly table: Table;
  readonly streams: Pick<StreamStore, 'find' | 'refusal' | 'claimPartitions'>;
  readonly get: (deletionId: string) => Promise<DeletionRecord | undefined>;
  readonly newId: () => string;
  readonly clock: Clock;
}

/**
 * DeletionStore's request of a partition deletion: one at a time per stream (a repeat with the
 * same cutoff answers the one under way, another cutoff is 409), the deletion record and the
 * stream's claim in one transaction; the stream stays ACTIVE and writable throughout.
 */
export function requestPartitions(
  context: PartitionRequestContext,
  request: { tenant: string; stream: string; before: string },
): Promise<DeletionRequest> {
  const { table, streams, clock } = context;
  const { tenant, stream, before } = request;
  return retry<DeletionRequest>(RETRY.contention, async () => {
    const current = await streams.find(tenant, stream);
    if (!current || current.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
    if (current.state !== 'ACTIVE') throw streams.refusal(current);
    if (current.partitionDeletionId) {
      const running = await context.get(current.partitionDeletionId);
      if (running && !hasEnded(running.state)) {
        if (running.before === before) {
          return { done: true, value: { created: false, deletion: running } };
        }
        throw new PartitionDeletionInProgressError(
          `${tenant}/${stream}`,
          running.deletionId,
          running.before,
        );
      }
    }
    const now = clock.now().toISOString();
    const deletion: DeletionRecord = { ...newDeletion(current, context.newId(), now), before };
    const result = await table.transact([
      streams.claimPartitions(current, deletion),
      table.putItem(
        {
          ...keys.deletion(tenant, deletion.deletionId),
          ...deletion,
          ...changes.indexKeys(deletion),
        },
        deletionMay('request'),
      ),
    ]);
    if (!result.ok) return { done: false, why: `partitions of ${tenant}/${stream}: lost a race` };
    return { done: true, value: { created: true, deletion } };
  });
}
