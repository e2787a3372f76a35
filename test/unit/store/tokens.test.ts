import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DeletionIndex,
  documentClient,
  KeyStore,
  keys,
  StreamStore,
  Table,
} from '../../../lib/store/index.ts';
import { BUCKET, DELETION_ID, TABLE } from '../../helpers/records.ts';

/*
 * Page tokens and key ids come from callers and end up in DynamoDB keys. Whatever a caller
 * sends is refused before it reaches DynamoDB, where a key longer than a key may be (or an
 * empty one) is a ValidationException: a 500 on AWS, which moto never answers.
 */
const dynamodb = mockClient(DynamoDBDocumentClient);
const table = () => new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
const token = (key: object) => Buffer.from(JSON.stringify(key)).toString('base64url');

const LISTED = keys.listed({ tenant: 'acme', deletionId: DELETION_ID, requestedAt: '' });
const deletionKey = (overrides: Record<string, string> = {}) => ({
  pk: LISTED.listPk,
  sk: `DELETION#${DELETION_ID}`,
  listPk: LISTED.listPk,
  listSk: `2026-03-01T11:00:00.000Z#${DELETION_ID}`,
  ...overrides,
});

beforeEach(() => {
  dynamodb.reset();
  dynamodb.on(QueryCommand).resolves({ Items: [] });
});

describe('DeletionIndex.list nextToken', () => {
  const list = (nextToken: string) =>
    new DeletionIndex({ table: table() }).list('acme', { limit: 10, nextToken });

  it('takes back the key it handed out', async () => {
    await list(token(deletionKey()));

    expect(dynamodb.commandCalls(QueryCommand)[0]?.args[0].input.ExclusiveStartKey).toEqual(
      deletionKey(),
    );
  });

  it.each([
    ['a sort key longer than a key may be', { sk: `DELETION#${'a'.repeat(3000)}` }],
    ['an empty index sort key', { listSk: '' }],
    [
      'an index sort key of another deletion',
      { listSk: `2026-03-01T11:00:00.000Z#${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}` },
    ],
    ['an index sort key that is not a time', { listSk: `${'9'.repeat(2000)}#${DELETION_ID}` }],
    ['a deletion id that is not one', { sk: 'DELETION#x', listSk: '2026-03-01T11:00:00.000Z#x' }],
  ])('refuses %s with 400 InvalidNextToken, asking DynamoDB nothing', async (_, overrides) => {
    await expect(list(token(deletionKey(overrides)))).rejects.toMatchObject({
      status: 400,
      code: 'InvalidNextToken',
    });
    expect(dynamodb.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

describe('an empty nextToken (?nextToken=)', () => {
  it.each([
    [
      'DeletionIndex.list',
      () => new DeletionIndex({ table: table() }).list('acme', { limit: 10, nextToken: '' }),
    ],
    [
      'StreamStore.list',
      () =>
        new StreamStore({ table: table(), bucket: BUCKET, root: 'streams' }).list('acme', 10, ''),
    ],
  ])('is refused by %s with 400 InvalidNextToken, not read as the first page', async (_, list) => {
    await expect(list()).rejects.toMatchObject({ status: 400, code: 'InvalidNextToken' });
    expect(dynamodb.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

describe('StreamStore.list nextToken', () => {
  const list = (nextToken: string) =>
    new StreamStore({ table: table(), bucket: BUCKET, root: 'streams' }).list(
      'acme',
      10,
      nextToken,
    );

  it('takes back a key of a stream name', async () => {
    await list(token(keys.stream('acme', 'logs')));

    expect(dynamodb.commandCalls(QueryCommand)[0]?.args[0].input.ExclusiveStartKey).toEqual(
      keys.stream('acme', 'logs'),
    );
  });

  it.each([
    ['a name longer than a key may be', `STREAM#${'a'.repeat(3000)}`],
    ['no name', 'STREAM#'],
    ['a name no stream can have', 'STREAM#Logs/1'],
  ])('refuses %s with 400 InvalidNextToken, asking DynamoDB nothing', async (_, sk) => {
    await expect(list(token({ pk: 'TENANT#acme', sk }))).rejects.toMatchObject({
      code: 'InvalidNextToken',
    });
    expect(dynamodb.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

describe('KeyStore.get', () => {
  it('finds no key under an id longer than a partition key may be, without reading', async () => {
    dynamodb.on(GetCommand).resolves({});
    const store = new KeyStore({ table: table() });

    expect(await store.get('k'.repeat(2100))).toBeUndefined();
    expect(dynamodb.commandCalls(GetCommand)).toHaveLength(0);
    await store.get('arn:aws:kms:us-east-1:111122223333:key/abc');
    expect(dynamodb.commandCalls(GetCommand)).toHaveLength(1);
  });
});
