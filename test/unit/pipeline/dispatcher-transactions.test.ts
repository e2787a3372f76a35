import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import {
  DynamoDBDocumentClient,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { clockOf, type PageMessage } from '../../../lib/core/index.ts';
import { Dispatcher } from '../../../lib/pipeline/index.ts';
import {
  ChainStore,
  DeletionStore,
  documentClient,
  StreamStore,
  Table,
} from '../../../lib/store/index.ts';
import { aDeletion, BUCKET, DELETION_ID, NOW, TABLE } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const dynamodb = mockClient(DynamoDBDocumentClient);
const location = 'streams/acme/logs/1/';
/** DynamoDB's limit on the items of one TransactWriteItems. */
const MAX_TRANSACTION_ITEMS = 100;

/** A location of `count` child prefixes, more than a page listed flat. */
function locationOf(count: number) {
  const prefixes = Array.from(
    { length: count },
    (_, n) => `${location}p${String(n).padStart(4, '0')}/`,
  );
  s3.on(ListObjectsV2Command).resolves({
    Contents: [{ Key: `${prefixes[0]}a.json`, Size: 3 }],
    IsTruncated: true,
    NextContinuationToken: 'more',
  });
  s3.on(ListObjectsV2Command, { Delimiter: '/' }).resolves({
    CommonPrefixes: prefixes.map((Prefix) => ({ Prefix })),
    IsTruncated: false,
  });
}

/** The real stores over a DynamoDB that takes every write; chains put are read back. */
function dispatcher() {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  const clock = clockOf(() => NOW);
  const streams = new StreamStore({ table, bucket: BUCKET, root: 'streams', clock });
  const deletions = new DeletionStore({ table, streams, clock });
  const chains = new ChainStore({ table, deletions, clock });
  const put: Array<Record<string, unknown>> = [];
  dynamodb.on(TransactWriteCommand).callsFake((input) => {
    for (const item of input.TransactItems ?? []) if (item.Put) put.push(item.Put.Item);
    return {};
  });
  dynamodb.on(QueryCommand).callsFake(() => ({ Items: put.filter((item) => item.chainId) }));
  dynamodb.on(UpdateCommand).resolves({ Attributes: {} });
  const queue = { send: vi.fn(async (_messages: PageMessage[]) => {}) };
  const subject = new Dispatcher({
    deletions,
    chains,
    s3: new S3Client({ region: 'us-east-1' }),
    queue,
    finalizer: { finalize: vi.fn(async () => 'completed' as const) },
    detectVersioning: false,
  });
  return { subject, put, queue };
}

const transactions = () =>
  dynamodb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input.TransactItems ?? []);

beforeEach(() => {
  s3.reset();
  dynamodb.reset();
});

describe('Dispatcher over the chain store: rounds of 99, 100 and 101 chains', () => {
  it.each([1, 98, 99, 100, 101, 250])(
    'creates every one of %i chains, once, in transactions DynamoDB takes (100 items at most)',
    async (count) => {
      // Prepare
      locationOf(count);
      const { subject, put, queue } = dispatcher();

      // Act
      await subject.dispatch(
        { tenant: 'acme', deletionId: DELETION_ID, round: 1 },
        aDeletion({ state: 'PENDING' }),
      );

      // Assess
      const sizes = transactions().map((items) => items.length);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
      const chainIds = put.map((item) => item.chainId);
      expect(new Set(chainIds).size).toBe(count);
      expect(chainIds).toHaveLength(count);
      // Every chain's first page goes to a worker (this dispatcher deletes none itself).
      const sent = queue.send.mock.calls.flatMap(([messages]) => messages as PageMessage[]);
      const started = new Set(sent.filter((m) => m.page === 0).map((m) => m.chainId));
      expect(started).toEqual(new Set(chainIds));
    },
  );

  it('starts a round of 99 chains with them in one transaction: 99 chains and the deletion', async () => {
    // Prepare
    locationOf(MAX_TRANSACTION_ITEMS - 1);
    const { subject } = dispatcher();

    // Act
    await subject.dispatch(
      { tenant: 'acme', deletionId: DELETION_ID, round: 1 },
      aDeletion({ state: 'PENDING' }),
    );

    // Assess
    expect(transactions().map((items) => items.length)).toEqual([MAX_TRANSACTION_ITEMS]);
  });
});
