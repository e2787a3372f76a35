import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  InternalServerError,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  clockOf,
  DeletionNotCancellableError,
  type DeletionRecord,
} from '../../../lib/core/index.ts';
import {
  DeletionStore,
  documentClient,
  keys,
  StreamStore,
  Table,
} from '../../../lib/store/index.ts';
import { aDeletion, aStream, BUCKET, DELETION_ID, NOW, TABLE } from '../../helpers/records.ts';

const dynamodb = mockClient(DynamoDBDocumentClient);
const clock = clockOf(() => NOW);

function stores() {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  const streams = new StreamStore({ table, bucket: BUCKET, root: 'streams', clock });
  return new DeletionStore({ table, streams, clock, newId: () => DELETION_ID });
}

const STREAM_KEY = keys.stream('acme', 'logs');
const DELETION_KEY = keys.deletion('acme', DELETION_ID);
const scheduled = aDeletion({ state: 'SCHEDULED', executeAfter: '2026-03-01T13:00:00.000Z' });

/** DynamoDB's answer to a transaction whose item `index` failed its condition. */
const cancelledAt = (index: number, old?: Record<string, unknown>) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [0, 1].map((at) =>
      at === index
        ? { Code: 'ConditionalCheckFailed', ...(old ? { Item: marshall(old) } : {}) }
        : { Code: 'None' },
    ),
  });

const writes = () => [
  ...dynamodb.commandCalls(PutCommand),
  ...dynamodb.commandCalls(UpdateCommand),
  ...dynamodb.commandCalls(TransactWriteCommand),
];
const transactionItems = (call = 0) =>
  dynamodb.commandCalls(TransactWriteCommand)[call]?.args[0].input.TransactItems ?? [];

beforeEach(() => {
  dynamodb.reset();
});

describe('DeletionStore.request (invariant 1: durable before ack)', () => {
  beforeEach(() => {
    dynamodb
      .on(GetCommand, { Key: STREAM_KEY })
      .resolves({ Item: { ...STREAM_KEY, ...aStream() } });
  });

  it('writes the tombstone and the deletion record in one transaction, and nothing else', async () => {
    dynamodb.on(TransactWriteCommand).resolves({});

    const { created, deletion } = await stores().request('acme', 'logs');

    expect(created).toBe(true);
    expect(deletion).toMatchObject({ deletionId: DELETION_ID, state: 'PENDING', generation: 1 });
    expect(writes()).toHaveLength(1);
    const [tombstone, record] = transactionItems();
    expect(tombstone?.Update).toMatchObject({
      Key: STREAM_KEY,
      ConditionExpression: expect.stringContaining('#state IN (:from0)'),
      ExpressionAttributeValues: expect.objectContaining({
        ':from0': 'ACTIVE',
        ':to': 'DELETING',
        ':generation': 1,
      }),
    });
    expect(record?.Put).toMatchObject({
      Item: { ...DELETION_KEY, deletionId: DELETION_ID, state: 'PENDING' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('acknowledges nothing when the transaction does not commit', async () => {
    dynamodb
      .on(TransactWriteCommand)
      .rejects(new InternalServerError({ message: 'internal', $metadata: {} }));

    await expect(stores().request('acme', 'logs')).rejects.toThrow(InternalServerError);
    expect(writes()).toHaveLength(1);
  });

  it('leaves a lost race to the condition, then answers with the deletion that won', async () => {
    const winner = aDeletion({ deletionId: 'another', state: 'PENDING' });
    dynamodb
      .on(GetCommand, { Key: STREAM_KEY })
      .resolvesOnce({ Item: { ...STREAM_KEY, ...aStream() } })
      .resolves({
        Item: { ...STREAM_KEY, ...aStream({ state: 'DELETING', deletionId: 'another' }) },
      });
    dynamodb
      .on(GetCommand, { Key: keys.deletion('acme', 'another') })
      .resolves({ Item: { ...keys.deletion('acme', 'another'), ...winner } });
    dynamodb
      .on(TransactWriteCommand)
      .rejects(cancelledAt(0, { ...STREAM_KEY, ...aStream({ state: 'DELETING' }) }));

    const { created, deletion } = await stores().request('acme', 'logs');

    expect(created).toBe(false);
    expect(deletion.deletionId).toBe('another');
    expect(writes()).toHaveLength(1);
  });

  it('takes a repeat whose deletion was cancelled after the stream was read as a new request', async () => {
    dynamodb
      .on(GetCommand, { Key: STREAM_KEY })
      .resolvesOnce({
        Item: { ...STREAM_KEY, ...aStream({ state: 'DELETING', deletionId: DELETION_ID }) },
      })
      .resolves({ Item: { ...STREAM_KEY, ...aStream() } });
    dynamodb
      .on(GetCommand, { Key: DELETION_KEY })
      .resolves({ Item: { ...DELETION_KEY, ...aDeletion({ state: 'CANCELLED' }) } });
    dynamodb.on(TransactWriteCommand).resolves({});

    const { created, deletion } = await stores().request('acme', 'logs', 3600);

    expect(created).toBe(true);
    expect(deletion.state).toBe('SCHEDULED');
    expect(dynamodb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});

describe('DeletionStore.cancel and begin (invariant 9: cancel and start never both win)', () => {
  const readAs = (...states: DeletionRecord['state'][]) => {
    const reads = dynamodb.on(GetCommand, { Key: DELETION_KEY });
    for (const state of states)
      reads.resolvesOnce({ Item: { ...DELETION_KEY, ...scheduled, state } });
  };

  it('cancels with the stream restored in one transaction, conditioned on SCHEDULED', async () => {
    readAs('SCHEDULED');
    dynamodb.on(TransactWriteCommand).resolves({});

    const cancelled = await stores().cancel('acme', DELETION_ID);

    expect(cancelled.state).toBe('CANCELLED');
    const [deletion, stream] = transactionItems();
    expect(deletion?.Update).toMatchObject({
      Key: DELETION_KEY,
      ConditionExpression: expect.stringContaining('#state IN (:from0)'),
      ExpressionAttributeValues: expect.objectContaining({
        ':from0': 'SCHEDULED',
        ':to': 'CANCELLED',
      }),
    });
    expect(stream?.Update?.Key).toEqual(STREAM_KEY);
  });

  it('refuses a cancel that lost to the start, as the next read shows', async () => {
    readAs('SCHEDULED', 'PENDING');
    dynamodb
      .on(TransactWriteCommand)
      .rejects(cancelledAt(0, { ...DELETION_KEY, ...scheduled, state: 'PENDING' }));

    await expect(stores().cancel('acme', DELETION_ID)).rejects.toThrow(DeletionNotCancellableError);
    expect(writes()).toHaveLength(1);
  });

  it('fences a start that lost to a cancel', async () => {
    dynamodb.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: marshall({ ...DELETION_KEY, ...scheduled, state: 'CANCELLED' }),
      }),
    );

    const begun = await stores().begin(scheduled);

    expect(begun.status).toBe('fenced');
    const [update] = dynamodb.commandCalls(UpdateCommand);
    expect(update?.args[0].input).toMatchObject({
      ConditionExpression: expect.stringContaining('#state IN (:from0)'),
      ExpressionAttributeValues: expect.objectContaining({
        ':from0': 'SCHEDULED',
        ':to': 'PENDING',
      }),
    });
  });
});

describe('DeletionStore.claimVerification (a write on the deletion item only when it can win)', () => {
  const running = (overrides: Partial<DeletionRecord>) =>
    dynamodb
      .on(GetCommand, { Key: DELETION_KEY })
      .resolves({ Item: { ...DELETION_KEY, ...aDeletion({ chainsTotal: 3, ...overrides }) } });

  it('reads the deletion and writes nothing while chains of its round have not settled', async () => {
    running({ chainsSettled: 2 });

    const claimed = await stores().claimVerification(aDeletion());

    expect(claimed).toMatchObject({ status: 'duplicate', current: { chainsSettled: 2 } });
    expect(writes()).toEqual([]);
  });

  it('writes nothing for a round verified already, another round, or a deletion that ended', async () => {
    for (const seen of [
      { chainsSettled: 3, verifiedRound: 1 },
      { chainsSettled: 3, round: 2 },
      { chainsSettled: 3, state: 'CANCELLED' as const },
    ]) {
      running(seen);
      expect((await stores().claimVerification(aDeletion())).status).toBe('duplicate');
    }
    expect(writes()).toEqual([]);
  });

  it('claims, conditionally, a round whose chains have all settled', async () => {
    running({ chainsSettled: 3 });
    dynamodb.on(UpdateCommand).resolves({
      Attributes: {
        ...DELETION_KEY,
        ...aDeletion({ chainsTotal: 3, chainsSettled: 3, verifiedRound: 1 }),
      },
    });

    const claimed = await stores().claimVerification(aDeletion());

    expect(claimed).toMatchObject({ status: 'ok', item: { verifiedRound: 1 } });
    const [update] = dynamodb.commandCalls(UpdateCommand);
    expect(update?.args[0].input.ConditionExpression).toContain('chainsSettled >= chainsTotal');
    expect(writes()).toHaveLength(1);
  });
});

describe("DeletionStore.complete: the deletion's own items leave with its receipt", () => {
  const running = aDeletion({ state: 'RUNNING', chainsTotal: 2, chainsSettled: 2 });
  const partition = { pk: `DELETION#${DELETION_ID}` };
  const itemKeys = [
    { ...partition, sk: 'CHAIN#1#a' },
    { ...partition, sk: 'CHAIN#1#b' },
    { ...partition, sk: 'FAILURE#1#streams/acme/logs/1/x.json' },
    { ...partition, sk: 'UPLOAD#u1#streams/acme/logs/1/big.bin' },
  ];
  const receiptExpiry = Math.floor(NOW.getTime() / 1000) + 365 * 86_400;

  it('gives every item of its partition, page after page, the expiry of its receipt', async () => {
    // Prepare: the partition's keys in two pages
    dynamodb.on(TransactWriteCommand).resolves({});
    dynamodb
      .on(QueryCommand)
      .resolvesOnce({ Items: itemKeys.slice(0, 3), LastEvaluatedKey: itemKeys[2] })
      .resolvesOnce({ Items: itemKeys.slice(3) });
    dynamodb.on(UpdateCommand).resolves({ Attributes: {} });

    // Act
    const done = await stores().complete(running);

    // Assess: the receipt's expiry, as the completion wrote it, on each item, which must exist
    const receipt = transactionItems()[0]?.Update;
    const updates = dynamodb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(done.status).toBe('ok');
    expect(receipt?.ExpressionAttributeValues?.[':expires']).toBe(receiptExpiry);
    expect(dynamodb.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': partition.pk },
      ConsistentRead: true,
    });
    expect(updates.map((update) => update.Key)).toEqual(itemKeys);
    for (const update of updates) {
      expect(update).toMatchObject({
        UpdateExpression: 'SET expiresAt = :expires ADD #lethe_sequence :lethe_one',
        ExpressionAttributeValues: { ':expires': receiptExpiry },
        ConditionExpression: 'attribute_exists(pk)',
      });
    }
  });

  it('gives none when the completion is fenced', async () => {
    // Prepare
    dynamodb.on(TransactWriteCommand).rejects(cancelledAt(0));

    // Act
    const done = await stores().complete(running);

    // Assess
    expect(done.status).toBe('fenced');
    expect(dynamodb.commandCalls(QueryCommand)).toEqual([]);
    expect(dynamodb.commandCalls(UpdateCommand)).toEqual([]);
  });
});
