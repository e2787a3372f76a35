import {
  type ChainLayout,
  type Clock,
  clockOf,
  type DeletionRecord,
  newChains,
} from '../../lib/core/index.ts';
import type { LocalStack } from '../../lib/local/local-stack.ts';
import {
  ChainStore,
  DeletionIndex,
  DeletionStore,
  documentClient,
  keys,
  OPEN_DELETIONS,
  SCHEDULED_DELETIONS,
  StreamStore,
  Table,
} from '../../lib/store/index.ts';

/** The three stores over a local stack's table, as the functions build them. */
export function storesOf(local: LocalStack, clock: Clock = clockOf(() => new Date())) {
  const client = documentClient(local.clients.dynamodb);
  const table = new Table(client, local.resources.tableName);
  const streams = new StreamStore({
    table,
    bucket: local.resources.bucket,
    root: 'streams',
    clock,
  });
  const deletions = new DeletionStore({ table, streams, clock });
  const chains = new ChainStore({ table, deletions, clock });
  const index = new DeletionIndex({ table });
  /** Writes a deletion record as it would stand in the table (open ones in the sweep index). */
  const putDeletion = async (deletion: DeletionRecord) => {
    const open = deletion.state === 'PENDING' || deletion.state === 'RUNNING';
    const scheduled = deletion.state === 'SCHEDULED';
    // Through the Table, as the stores write: retried if refused for a transaction in flight.
    await table.putAll([
      {
        ...keys.deletion(deletion.tenant, deletion.deletionId),
        ...keys.listed(deletion),
        ...deletion,
        ...(open ? { sweepPk: OPEN_DELETIONS, sweepSk: deletion.updatedAt } : {}),
        ...(scheduled ? { sweepPk: SCHEDULED_DELETIONS, sweepSk: deletion.executeAfter } : {}),
      },
    ]);
    return deletion;
  };
  /**
   * Writes a deletion's chains as they would stand in the table, whatever the deletion's state
   * (ChainStore.register adds chains only to a PENDING round).
   */
  const putChains = async (deletion: DeletionRecord, layouts: ChainLayout[], versioned = false) => {
    const records = newChains(deletion, layouts, versioned, clock.now().getTime());
    await table.putAll(
      records.map((chain) => ({
        ...keys.chain(chain.deletionId, chain.round, chain.chainId),
        ...chain,
      })),
    );
  };
  return { table, streams, deletions, index, chains, putDeletion, putChains };
}
