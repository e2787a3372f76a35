import {
  ConditionalCheckFailedException,
  DynamoDBClient,
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
import { BadRequestError, StreamDeletingError, StreamNotFoundError } from '../../lib/errors.ts';
import { keys, type StreamRecord } from '../../lib/model.ts';
import { StreamRegistry } from '../../lib/registry.ts';
import { documentClient } from '../../lib/table.ts';
import { aDeletion, aStream, BUCKET, DELETION_ID, NOW, TABLE } from '../helpers/records.ts';

const table = mockClient(DynamoDBDocumentClient);

const registry = () =>
  new StreamRegistry({
    tableName: TABLE,
    bucket: BUCKET,
    root: 'streams',
    client: documentClient(new DynamoDBClient({ region: 'us-east-1' })),
    retryAfterSeconds: 45,
    now: () => NOW,
    newId: () => DELETION_ID,
  });

/** What DynamoDB answers when a condition fails with ReturnValuesOnConditionCheckFailure ALL_OLD. */
const conditionFailed = (old?: object) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(old ? { Item: marshall(old, { removeUndefinedValues: true }) } : {}),
  });

const transactionCancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

const streamKey = keys.stream('acme', 'logs');
const deleting = aStream({ state: 'DELETING', deletionId: DELETION_ID });

beforeEach(() => {
  table.reset();
});

describe('StreamRegistry.create', () => {
  it('gives a new name generation 1 under streams/<tenant>/<stream>/1/', async () => {
    table.on(PutCommand).resolves({});

    const result = await registry().create('acme', 'logs');

    expect(result).toEqual({
      created: true,
      stream: {
        type: 'STREAM',
        tenant: 'acme',
        stream: 'logs',
        state: 'ACTIVE',
        generation: 1,
        bucket: BUCKET,
        prefix: 'streams/acme/logs/1/',
        createdAt: NOW.toISOString(),
        updatedAt: NOW.toISOString(),
      },
    });
  });

  it('writes a new name only if no item holds its key, asking for the old item', async () => {
    table.on(PutCommand).resolves({});

    await registry().create('acme', 'logs');

    const [put] = table.commandCalls(PutCommand);
    expect(table.commandCalls(PutCommand)).toHaveLength(1);
    expect(put?.args[0].input).toMatchObject({
      TableName: TABLE,
      Item: { ...streamKey, state: 'ACTIVE', generation: 1 },
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('refuses a name that is being deleted with StreamDeletingError and Retry-After', async () => {
    table.on(PutCommand).rejects(conditionFailed(deleting));

    const error = await registry()
      .create('acme', 'logs')
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(StreamDeletingError);
    expect(error).toMatchObject({ deletionId: DELETION_ID, headers: { 'Retry-After': '45' } });
    expect(table.commandCalls(PutCommand)).toHaveLength(1);
  });

  it('returns an ACTIVE name as it is, with created false', async () => {
    const active = aStream({ generation: 2 });
    table.on(PutCommand).rejects(conditionFailed(active));

    const result = await registry().create('acme', 'logs');

    expect(result).toEqual({ created: false, stream: active });
    expect(table.commandCalls(PutCommand)).toHaveLength(1);
  });

  it('re-creates a DELETED name as generation + 1 under a new prefix', async () => {
    table
      .on(PutCommand)
      .rejectsOnce(conditionFailed(aStream({ state: 'DELETED', generation: 3 })))
      .resolves({});

    const result = await registry().create('acme', 'logs');

    expect(result.created).toBe(true);
    expect(result.stream).toMatchObject({ generation: 4, prefix: 'streams/acme/logs/4/' });
  });

  it('conditions the re-creation on the DELETED generation it read', async () => {
    table
      .on(PutCommand)
      .rejectsOnce(conditionFailed(aStream({ state: 'DELETED', generation: 3 })))
      .resolves({});

    await registry().create('acme', 'logs');

    const second = table.commandCalls(PutCommand)[1]?.args[0].input;
    expect(second).toMatchObject({
      Item: { ...streamKey, generation: 4, prefix: 'streams/acme/logs/4/' },
      ConditionExpression: '#state = :deleted AND generation = :previous',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':deleted': 'DELETED', ':previous': 3 },
    });
  });
});

describe('StreamRegistry.admitIngest', () => {
  it('admits an ingest only if the stream exists and is ACTIVE', async () => {
    const active = aStream();
    table.on(UpdateCommand).resolves({ Attributes: active });

    const admitted = await registry().admitIngest('acme', 'logs');

    expect(admitted).toEqual(active);
    expect(table.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      Key: streamKey,
      ConditionExpression: 'attribute_exists(pk) AND #state = :active',
      ExpressionAttributeValues: { ':active': 'ACTIVE' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('refuses an ingest during a deletion with StreamDeletingError', async () => {
    table.on(UpdateCommand).rejects(conditionFailed(deleting));

    const error = await registry()
      .admitIngest('acme', 'logs')
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(StreamDeletingError);
    expect(error).toMatchObject({ headers: { 'Retry-After': '45' } });
  });

  it.each<[string, StreamRecord | undefined]>([
    ['missing', undefined],
    ['DELETED', aStream({ state: 'DELETED' })],
  ])('refuses an ingest into a %s stream with StreamNotFoundError', async (_, old) => {
    table.on(UpdateCommand).rejects(conditionFailed(old));

    const ingest = registry().admitIngest('acme', 'logs');

    await expect(ingest).rejects.toBeInstanceOf(StreamNotFoundError);
  });
});

describe('StreamRegistry.requestDeletion', () => {
  beforeEach(() => {
    // A running deletion's counts live on its chains.
    table
      .on(QueryCommand)
      .resolves({ Items: [{ round: 1, objectsDeleted: 1200, bytesDeleted: 0, failedObjects: 0 }] });
  });

  it('returns the running deletion of a DELETING stream, with created false', async () => {
    const running = aDeletion({ state: 'RUNNING', objectsDeleted: 1200 });
    table.on(GetCommand, { Key: streamKey }).resolves({ Item: deleting });
    table.on(GetCommand, { Key: keys.deletion('acme', DELETION_ID) }).resolves({ Item: running });

    const request = await registry().requestDeletion('acme', 'logs');

    expect(request).toEqual({ created: false, deletion: running });
  });

  it('writes no transaction for a repeated delete', async () => {
    table.on(GetCommand, { Key: streamKey }).resolves({ Item: deleting });
    table.on(GetCommand, { Key: keys.deletion('acme', DELETION_ID) }).resolves({
      Item: aDeletion(),
    });

    await registry().requestDeletion('acme', 'logs');

    expect(table.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('creates a PENDING deletion of the current generation', async () => {
    const active = aStream({ generation: 2 });
    table.on(GetCommand, { Key: streamKey }).resolves({ Item: active });
    table.on(TransactWriteCommand).resolves({});

    const request = await registry().requestDeletion('acme', 'logs');

    expect(request.created).toBe(true);
    expect(request.deletion).toMatchObject({
      deletionId: DELETION_ID,
      state: 'PENDING',
      generation: 2,
      prefix: 'streams/acme/logs/2/',
      round: 1,
      attempts: 1,
      objectsDeleted: 0,
      bytesDeleted: 0,
      requestedAt: NOW.toISOString(),
    });
  });

  it('writes the tombstone and the deletion record in one conditional transaction', async () => {
    table.on(GetCommand, { Key: streamKey }).resolves({ Item: aStream({ generation: 2 }) });
    table.on(TransactWriteCommand).resolves({});

    await registry().requestDeletion('acme', 'logs');

    const calls = table.commandCalls(TransactWriteCommand);
    expect(calls).toHaveLength(1);
    const [update, put] = calls[0]?.args[0].input.TransactItems ?? [];
    expect(update?.Update).toMatchObject({
      TableName: TABLE,
      Key: streamKey,
      ConditionExpression: '#state = :active AND generation = :generation',
      ExpressionAttributeValues: {
        ':deleting': 'DELETING',
        ':id': DELETION_ID,
        ':active': 'ACTIVE',
        ':generation': 2,
      },
    });
    expect(put?.Put).toMatchObject({
      TableName: TABLE,
      Item: { ...keys.deletion('acme', DELETION_ID), state: 'PENDING', generation: 2 },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('answers with the winning deletion when a concurrent delete took the stream first', async () => {
    const winner = aDeletion({ state: 'PENDING', objectsDeleted: 1200 });
    table
      .on(GetCommand, { Key: streamKey })
      .resolvesOnce({ Item: aStream() })
      .resolves({ Item: deleting });
    table.on(GetCommand, { Key: keys.deletion('acme', DELETION_ID) }).resolves({ Item: winner });
    table.on(TransactWriteCommand).rejects(transactionCancelled('ConditionalCheckFailed', 'None'));

    const request = await registry().requestDeletion('acme', 'logs');

    expect(request).toEqual({ created: false, deletion: winner });
    expect(table.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it.each<[string, StreamRecord | undefined]>([
    ['missing', undefined],
    ['DELETED', aStream({ state: 'DELETED' })],
  ])('refuses to delete a %s stream with StreamNotFoundError', async (_, current) => {
    table.on(GetCommand, { Key: streamKey }).resolves({ Item: current });

    const request = registry().requestDeletion('acme', 'logs');

    await expect(request).rejects.toBeInstanceOf(StreamNotFoundError);
    expect(table.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });
});

describe('StreamRegistry.list', () => {
  const lastKey = { pk: 'TENANT#acme', sk: 'STREAM#logs' };

  it('hands back a nextToken that resumes the query where it stopped', async () => {
    table
      .on(QueryCommand)
      .resolvesOnce({ Items: [aStream()], LastEvaluatedKey: lastKey })
      .resolves({ Items: [] });
    const first = await registry().list('acme', 1);

    const second = await registry().list('acme', 1, first.nextToken);

    expect(table.commandCalls(QueryCommand)[1]?.args[0].input.ExclusiveStartKey).toEqual(lastKey);
    expect(second).toEqual({ streams: [] });
  });

  it.each([
    ['another tenant', Buffer.from(JSON.stringify(lastKey)).toString('base64url'), 'globex'],
    ['not JSON', 'bm90IGpzb24', 'acme'],
    [
      'a deletion key',
      Buffer.from('{"pk":"TENANT#acme","sk":"DELETION#x"}').toString('base64url'),
      'acme',
    ],
    [
      'an extra key',
      Buffer.from(JSON.stringify({ ...lastKey, x: 1 })).toString('base64url'),
      'acme',
    ],
  ])('rejects a nextToken of %s with InvalidNextToken', async (_, token, tenant) => {
    table.on(QueryCommand).resolves({ Items: [] });

    const error = await registry()
      .list(tenant, 10, token)
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ code: 'InvalidNextToken', status: 400 });
    expect(table.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

describe('StreamRegistry.getDeletion', () => {
  it('reads the counts of a running deletion from the chains of every round', async () => {
    table.on(GetCommand).resolves({ Item: aDeletion({ state: 'RUNNING', round: 2 }) });
    table.on(QueryCommand).resolves({
      Items: [
        { round: 1, objectsDeleted: 700, bytesDeleted: 7000, failedObjects: 3 },
        { round: 2, objectsDeleted: 3, bytesDeleted: 30, failedObjects: 1 },
        { round: 2, objectsDeleted: 10, bytesDeleted: 100, failedObjects: 0 },
      ],
    });

    const deletion = await registry().getDeletion('acme', DELETION_ID);

    expect(deletion).toMatchObject({ objectsDeleted: 713, bytesDeleted: 7130, failedObjects: 1 });
    expect(table.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :chains)',
      ExpressionAttributeValues: { ':pk': `DELETION#${DELETION_ID}`, ':chains': 'CHAIN#' },
    });
  });

  it('takes a COMPLETED receipt as written, without reading its chains', async () => {
    table.on(GetCommand).resolves({ Item: aDeletion({ state: 'COMPLETED', objectsDeleted: 5 }) });

    const deletion = await registry().getDeletion('acme', DELETION_ID);

    expect(deletion.objectsDeleted).toBe(5);
    expect(table.commandCalls(QueryCommand)).toHaveLength(0);
  });
});
