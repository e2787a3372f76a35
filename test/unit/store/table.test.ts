import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  InternalServerError,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isAbsent } from '../../../lib/store/conditions.ts';
import { documentClient, Table } from '../../../lib/store/index.ts';
import { RetriesExhaustedError } from '../../../lib/support/index.ts';
import { TABLE } from '../../helpers/records.ts';

/**
 * What DynamoDB answers a write on an item that a transaction is working on: the write was not
 * applied, and the SDK does not retry it itself. The Table tries again.
 */
const dynamodb = mockClient(DynamoDBDocumentClient);
const table = () => new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
const KEY = { pk: 'TENANT#acme', sk: 'DELETION#d1' };

const conflict = () =>
  new TransactionConflictException({
    message: 'Transaction is ongoing for the item',
    $metadata: { httpStatusCode: 400 },
  });
const cancelledFor = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
const change = {
  update: 'SET updatedAt = :now',
  values: { ':now': '2026-03-01T12:00:00.000Z' },
  condition: { expression: 'attribute_exists(pk)' },
};

beforeEach(() => {
  dynamodb.reset();
  // No backoff: the waits are the retry helper's, tested on their own.
  vi.spyOn(Math, 'random').mockReturnValue(0);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('Table: writes refused for a transaction under way', () => {
  it('update: tries again after TransactionConflictException, and answers the write', async () => {
    dynamodb
      .on(UpdateCommand)
      .rejectsOnce(conflict())
      .rejectsOnce(conflict())
      .resolves({ Attributes: { ...KEY, updatedAt: '2026-03-01T12:00:00.000Z' } });

    const written = await table().update(KEY, change);

    expect(written).toEqual({ ok: true, item: { updatedAt: '2026-03-01T12:00:00.000Z' } });
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(3);
    // The same write each time: nothing of a refused one was applied.
    const inputs = dynamodb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(inputs[1]).toEqual(inputs[0]);
    expect(inputs[2]).toEqual(inputs[0]);
  });

  it('update: a failed condition after a conflict is still the answer it was', async () => {
    dynamodb
      .on(UpdateCommand)
      .rejectsOnce(conflict())
      .rejectsOnce(
        new ConditionalCheckFailedException({
          message: 'The conditional request failed',
          $metadata: {},
          Item: marshall({ ...KEY, state: 'CANCELLED' }),
        }),
      );

    const written = await table().update(KEY, change);

    expect(written).toEqual({ ok: false, old: { state: 'CANCELLED' } });
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('put: tries again after TransactionConflictException', async () => {
    dynamodb.on(PutCommand).rejectsOnce(conflict()).resolves({});

    const written = await table().put(KEY, { state: 'PENDING' }, isAbsent);

    expect(written).toEqual({ ok: true, item: { state: 'PENDING' } });
    expect(dynamodb.commandCalls(PutCommand)).toHaveLength(2);
  });

  it('putAll: each item refused for a conflict is put again, the others once', async () => {
    const items = Array.from({ length: 30 }, (_, index) => ({ pk: 'P', sk: `S#${index}` }));
    const refused = new Set(['S#3', 'S#27']);
    const tries = new Map<string, number>();
    dynamodb.on(PutCommand).callsFake((input: { Item: { sk: string } }) => {
      const sk = input.Item.sk;
      tries.set(sk, (tries.get(sk) ?? 0) + 1);
      if (refused.has(sk) && tries.get(sk) === 1) throw conflict();
      return {};
    });

    await table().putAll(items);

    expect([...tries.keys()].sort()).toEqual(items.map((item) => item.sk).sort());
    expect([...tries].filter(([, count]) => count > 1)).toEqual([
      ['S#3', 2],
      ['S#27', 2],
    ]);
  });

  it('gives up after a bounded number of tries', async () => {
    dynamodb.on(UpdateCommand).rejects(conflict());

    await expect(table().update(KEY, change)).rejects.toBeInstanceOf(RetriesExhaustedError);
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(10);
  });

  it('waits between tries, with jitter under an exponential cap', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const waits: number[] = [];
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((resolve: () => void, ms: number) => {
      waits.push(ms);
      resolve();
      return 0;
    }) as unknown as typeof setTimeout);
    dynamodb.on(UpdateCommand).rejects(conflict());

    await expect(table().update(KEY, change)).rejects.toBeInstanceOf(RetriesExhaustedError);
    // Half of min(2 s, 50 ms * 2^try): the jitter's draw was 0.5.
    expect(waits).toEqual([50, 100, 200, 400, 800, 1000, 1000, 1000, 1000]);
  });

  it('does not retry other errors', async () => {
    dynamodb.on(UpdateCommand).rejects(new InternalServerError({ message: 'boom', $metadata: {} }));

    await expect(table().update(KEY, change)).rejects.toBeInstanceOf(InternalServerError);
    expect(dynamodb.commandCalls(UpdateCommand)).toHaveLength(1);
  });
});

describe('Table: transactions cancelled for a conflict', () => {
  it('runs the transaction again when DynamoDB cancelled it for TransactionConflict', async () => {
    dynamodb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelledFor('TransactionConflict', 'None'))
      .resolves({});

    const result = await table().transact([
      table().updateItem(KEY, change),
      table().putItem({ pk: 'P', sk: 'S' }, isAbsent),
    ]);

    expect(result).toEqual({ ok: true });
    expect(dynamodb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('answers the failed condition, not a retry, when one item failed its condition', async () => {
    dynamodb.on(TransactWriteCommand).rejectsOnce(cancelledFor('None', 'ConditionalCheckFailed'));

    const result = await table().transact([
      table().updateItem(KEY, change),
      table().putItem({ pk: 'P', sk: 'S' }, isAbsent),
    ]);

    expect(result).toEqual({ ok: false, failed: [1] });
    expect(dynamodb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });
});

describe("Table: every write counts the item's writes (sequence)", () => {
  it('puts a new item at 1', async () => {
    dynamodb.on(PutCommand).resolves({});

    await table().put(KEY, { state: 'SCHEDULED' }, isAbsent);

    expect(dynamodb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      sequence: 1,
    });
    expect(table().putItem({ ...KEY }, isAbsent).Put?.Item).toMatchObject({ sequence: 1 });
  });

  it('raises it by one with each update, in the ADD clause there is or a new one', async () => {
    dynamodb.on(UpdateCommand).resolves({ Attributes: {} });

    await table().update(KEY, change);
    await table().update(KEY, { update: 'ADD pagesDone :one SET a = :a', values: { ':a': 1 } });

    const inputs = dynamodb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => input.UpdateExpression)).toEqual([
      'SET updatedAt = :now ADD #lethe_sequence :lethe_one',
      'ADD #lethe_sequence :lethe_one, pagesDone :one SET a = :a',
    ]);
    expect(inputs[0]).toMatchObject({
      ExpressionAttributeNames: { '#lethe_sequence': 'sequence' },
      ExpressionAttributeValues: { ':lethe_one': 1, ':now': '2026-03-01T12:00:00.000Z' },
    });
    expect(table().updateItem(KEY, change).Update?.UpdateExpression).toBe(
      'SET updatedAt = :now ADD #lethe_sequence :lethe_one',
    );
  });
});
