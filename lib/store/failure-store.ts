import type { DeletionRecord, DeletionRef, KeyFailure } from '../core/index.ts';
import { keys } from './layout.ts';
import type { Table } from './table.ts';

/**
 * The key failures of a deletion's rounds: one item per key (and version) and round, so a
 * page reported twice records its failures once.
 */
export class FailureStore {
  readonly #table: Table;

  constructor(options: { readonly table: Table }) {
    this.#table = options.table;
  }

  /** Remembers keys that could not be deleted (idempotent: one item per key and round). */
  async record(deletion: DeletionRef, failures: KeyFailure[]): Promise<void> {
    await this.#table.putAll(
      failures.map((failure) => ({
        ...keys.failure(
          deletion.deletionId,
          deletion.round,
          failure.versionId ? `${failure.key}#${failure.versionId}` : failure.key,
        ),
        ...failure,
      })),
    );
  }

  /** The key failures of the deletion's current round, at most `limit` of them. */
  async list(
    deletion: Pick<DeletionRecord, 'deletionId' | 'round' | 'failedObjects'>,
    limit = 100,
  ): Promise<KeyFailure[]> {
    if (deletion.failedObjects === 0) return [];
    const scope = keys.failuresOf(deletion.deletionId, deletion.round);
    const { items } = await this.#table.queryPage<KeyFailure>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :failures)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':failures': scope.skPrefix },
      Limit: limit,
      ConsistentRead: true,
    });
    return items.map(({ key, versionId, code, message }) => ({
      key,
      ...(versionId ? { versionId } : {}),
      code,
      message,
    }));
  }
}
