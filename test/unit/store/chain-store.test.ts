import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { clockOf } from '../../../lib/core/index.ts';
import { ChainStore, DeletionStore, documentClient, Table } from '../../../lib/store/index.ts';
import { StreamStore } from '../../../lib/store/stream-store.ts';
import { aDeletion, BUCKET, NOW, TABLE } from '../../helpers/records.ts';

const dynamodb = mockClient(DynamoDBDocumentClient);
const clock = clockOf(() => NOW);

function chainStore() {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  const streams = new StreamStore({ table, bucket: BUCKET, root: 'streams', clock });
  const deletions = new DeletionStore({ table, streams, clock });
  return new ChainStore({ table, deletions, clock });
}

const pending = aDeletion({ state: 'PENDING' });
const layout = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    chainId: String(index).padStart(20, '0'),
    prefix: `${pending.prefix}p${index}/`,
  }));
const transactions = () =>
  dynamodb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input.TransactItems ?? []);
const chainIds = (items: ReturnType<typeof transactions>[number]) =>
  items.flatMap((item) => (item.Put ? [String(item.Put.Item?.chainId)] : []));
const cancelledAt = (...indexes: number[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: Array.from({ length: 99 }, (_, at) => ({
      Code: indexes.includes(at) ? 'ConditionalCheckFailed' : 'None',
    })),
  });

beforeEach(() => {
  dynamodb.reset();
});

describe('ChainStore.register (a round begun chain by chain)', () => {
  it('creates the chains 98 a transaction, each with the check of its deletion first', async () => {
    dynamodb.on(TransactWriteCommand).resolves({});

    const registered = await chainStore().register(pending, layout(200), false);

    expect(registered.status).toBe('ok');
    const sent = transactions();
    expect(sent.map((items) => items.length)).toEqual([99, 99, 5]);
    for (const items of sent) {
      expect(items[0]?.ConditionCheck?.Key).toEqual({
        pk: `TENANT#${pending.tenant}`,
        sk: `DELETION#${pending.deletionId}`,
      });
      expect(items.slice(1).every((item) => item.Put !== undefined)).toBe(true);
    }
    expect(sent.flatMap(chainIds)).toEqual(layout(200).map((chain) => chain.chainId));
  });

  it('leaves a chain that exists already as it is and creates the others', async () => {
    dynamodb.on(TransactWriteCommand).rejectsOnce(cancelledAt(2, 5)).resolves({});

    const registered = await chainStore().register(pending, layout(10), false);

    expect(registered.status).toBe('ok');
    const [first, again] = transactions();
    expect(first && chainIds(first)).toHaveLength(10);
    const kept = layout(10).filter((_, index) => index !== 1 && index !== 4);
    expect(again && chainIds(again)).toEqual(kept.map((chain) => chain.chainId));
    expect(transactions()).toHaveLength(2);
  });

  it('is fenced, and creates nothing more, once its deletion is not PENDING in the round', async () => {
    dynamodb.on(TransactWriteCommand).rejectsOnce(cancelledAt(0, 3));

    const registered = await chainStore().register(pending, layout(200), false);

    expect(registered.status).toBe('fenced');
    expect(transactions()).toHaveLength(1);
  });
});
