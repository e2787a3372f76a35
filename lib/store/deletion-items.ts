import { type ItemKey, keys, TTL_ATTRIBUTE } from './layout.ts';
import type { Table } from './table.ts';

/** Items given their expiry at once. */
const PARALLEL = 16;

/**
 * Gives every item of a deletion's own partition (its chains, key failures and uploads, which
 * hold key names) the expiry of its receipt. Only once it has COMPLETED: nothing reads them
 * after (its receipt holds its totals and lists no failure), while a FAILED deletion's retry
 * counts on its chains and its receipt lists its failures. The same value each time, so a
 * second pass changes nothing; an item gone meanwhile is not written again.
 */
export async function expireDeletionItems(
  table: Table,
  deletionId: string,
  expiresAt: number,
): Promise<void> {
  const change = {
    update: `SET ${TTL_ATTRIBUTE} = :expires`,
    values: { ':expires': expiresAt },
    condition: { expression: 'attribute_exists(pk)' },
  };
  const found: ItemKey[] = [];
  for await (const key of table.query<ItemKey>(itemsOf(deletionId), true)) found.push(key);
  for (let start = 0; start < found.length; start += PARALLEL) {
    await Promise.all(found.slice(start, start + PARALLEL).map((key) => table.update(key, change)));
  }
}

/** The query of the keys of every item of a deletion's own partition. */
export const itemsOf = (deletionId: string) => ({
  KeyConditionExpression: 'pk = :pk',
  ExpressionAttributeValues: { ':pk': keys.itemsOf(deletionId).pk },
  ProjectionExpression: 'pk, sk',
  ConsistentRead: true,
});
