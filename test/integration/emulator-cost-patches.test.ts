import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  BatchGetItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandInput,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandInput,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startMoto } from '#lib/local/emulator.ts';

/**
 * The launcher's cost patches (lib/local/moto/lethe_moto.py: server-dispatch-cost,
 * dynamodb-query-cost, dynamodb-answer-cost, dynamodb-expression-cost, and dynamodb-cancelled-transactions' item-by-item
 * rollback, s3-list-versions-cost, s3-list-objects-cost, s3-serial-requests) make moto cheaper, never different: the same requests, sent to a bare
 * `moto_server` and to the launcher, get the same answers. What they save is measured by
 * `npx tsx bench/experiments/shapes.ts`, not here.
 */

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number): AttributeValue => ({ N: String(value) });

/** A chain-like item: nested maps and lists, numbers, booleans, a null, a string set. */
const item = (pk: string, sk: string, n: number): Record<string, AttributeValue> => ({
  pk: S(pk),
  sk: S(sk),
  gsi: S(`g${n % 2}`),
  at: S(`2026-01-${String(n + 1).padStart(2, '0')}`),
  n: N(n),
  ended: { BOOL: n % 2 === 0 },
  nothing: { NULL: true },
  tags: { SS: ['a', `t${n}`] },
  open: { M: { [String(n)]: { M: { count: N(n * 3), lastKey: S(`k/${n}`) } } } },
  list: { L: [N(1), S('two'), { M: { three: N(3) } }] },
});

/**
 * A set's members in order: DynamoDB's sets have none, and moto answers a projected set in its
 * Python process's hash order, which differs from one process to the next.
 */
const setsSorted = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(setsSorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) =>
      key === 'SS' && Array.isArray(inner) ? [key, [...inner].sort()] : [key, setsSorted(inner)],
    ),
  );
};

/** Every answer of one scripted session, with what differs between any two runs blanked. */
async function session(endpoint: string, table: string) {
  const ddb = new DynamoDBClient({ endpoint, maxAttempts: 1 });
  const streams = new DynamoDBStreamsClient({ endpoint, maxAttempts: 1 });
  const answers: Record<string, unknown> = {};
  const keep = (name: string, output: object) => {
    const { $metadata, ...rest } = output as { $metadata?: unknown };
    answers[name] = setsSorted(rest);
  };
  const query = async (name: string, input: Omit<QueryCommandInput, 'TableName'>) =>
    keep(name, await ddb.send(new QueryCommand({ TableName: table, ...input })));
  const created = await ddb.send(
    new CreateTableCommand({
      TableName: table,
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'gsi', AttributeType: 'S' },
        { AttributeName: 'at', AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'by-gsi',
          KeySchema: [
            { AttributeName: 'gsi', KeyType: 'HASH' },
            { AttributeName: 'at', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'by-gsi-include',
          KeySchema: [
            { AttributeName: 'gsi', KeyType: 'HASH' },
            { AttributeName: 'at', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['n', 'open', 'tags'] },
        },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  for (let n = 0; n < 9; n++) {
    await ddb.send(new PutItemCommand({ TableName: table, Item: item(`p${n % 3}`, `s${n}`, n) }));
  }
  keep(
    'put ALL_OLD',
    await ddb.send(
      new PutItemCommand({ TableName: table, Item: item('p0', 's0', 10), ReturnValues: 'ALL_OLD' }),
    ),
  );
  for (const ReturnValues of ['ALL_NEW', 'ALL_OLD', 'UPDATED_NEW', 'NONE'] as const) {
    keep(
      `update ${ReturnValues}`,
      await ddb.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: S('p1'), sk: S('s1') },
          UpdateExpression: 'SET #open.#page = :page, ended = :true ADD n :one REMOVE #list',
          ExpressionAttributeNames: { '#open': 'open', '#page': '7', '#list': 'list' },
          ExpressionAttributeValues: {
            ':page': { M: { count: N(7) } },
            ':true': { BOOL: true },
            ':one': N(1),
          },
          ReturnValues,
        }),
      ),
    );
  }
  // The same expression on another item, with other values: nothing of the first carries over.
  keep(
    'update again, elsewhere',
    await ddb.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: S('p2'), sk: S('s2') },
        UpdateExpression: 'SET #open.#page = :page, ended = :true ADD n :one REMOVE #list',
        ExpressionAttributeNames: { '#open': 'open', '#page': '2', '#list': 'list' },
        ExpressionAttributeValues: {
          ':page': { M: { count: N(2), lastKey: S('k/2') } },
          ':true': { BOOL: false },
          ':one': N(5),
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  keep(
    'update, another expression',
    await ddb.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: S('p0'), sk: S('s3') },
        UpdateExpression: 'SET #at = :at REMOVE nothing ADD n :one',
        ExpressionAttributeNames: { '#at': 'at' },
        ExpressionAttributeValues: { ':at': S('2026-02-01'), ':one': N(2) },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  // Functions, arithmetic and nested paths, one expression on two items: each validates a copy
  // of the parsed tree of its own, and neither sees the other's values.
  for (const n of [4, 5]) {
    keep(
      `update with functions ${n}`,
      await ddb.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: S(`p${n % 3}`), sk: S(`s${n}`) },
          UpdateExpression:
            'SET #list = list_append(if_not_exists(#list, :empty), :more), n = n + :step, #open.#page.#count = :count, fresh = if_not_exists(fresh, :step) REMOVE #list[0] ADD #tags :tag',
          ExpressionAttributeNames: {
            '#list': 'list',
            '#open': 'open',
            '#page': String(n),
            '#count': 'count',
            '#tags': 'tags',
          },
          ExpressionAttributeValues: {
            ':empty': { L: [] },
            ':more': { L: [S(`more${n}`), { M: { n: N(n) } }] },
            ':step': N(n * 10),
            ':count': N(n + 100),
            ':tag': { SS: [`extra${n}`] },
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
  }
  // One ConditionExpression text, sent with values of its own each time: each write is
  // decided by its own values (the first holds, the second fails, the third holds).
  for (const [n, seen] of [
    [70, 0],
    [71, 999],
    [72, 70],
  ]) {
    keep(
      `conditional update ${n}`,
      await ddb
        .send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: S('p1'), sk: S('c') },
            UpdateExpression: 'SET n = :n',
            ConditionExpression: 'attribute_not_exists(pk) OR (#n = :seen AND n <> :n)',
            ExpressionAttributeNames: { '#n': 'n' },
            ExpressionAttributeValues: { ':n': N(n as number), ':seen': N(seen as number) },
            ReturnValues: 'ALL_NEW',
          }),
        )
        .then(
          (output) => output,
          (error: Error) => ({ error: error.name }),
        ),
    );
  }
  keep(
    'get',
    await ddb.send(new GetItemCommand({ TableName: table, Key: { pk: S('p2'), sk: S('s2') } })),
  );
  keep(
    'get missing',
    await ddb.send(new GetItemCommand({ TableName: table, Key: { pk: S('p9'), sk: S('s9') } })),
  );
  keep(
    'get projected',
    await ddb.send(
      new GetItemCommand({
        TableName: table,
        Key: { pk: S('p2'), sk: S('s5') },
        ProjectionExpression: 'n, #open',
        ExpressionAttributeNames: { '#open': 'open' },
        ConsistentRead: true,
      }),
    ),
  );
  let start: Record<string, AttributeValue> | undefined;
  let page = 0;
  do {
    const output = await ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :s)',
        ExpressionAttributeValues: { ':pk': S('p0'), ':s': S('s') },
        Limit: 2,
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    keep(`query page ${page++}`, output);
    start = output.LastEvaluatedKey;
  } while (start);
  await query('query backwards, filtered', {
    KeyConditionExpression: 'pk = :pk',
    FilterExpression: 'n > :n',
    ExpressionAttributeValues: { ':pk': S('p1'), ':n': N(2) },
    ScanIndexForward: false,
  });
  await query('query index', {
    IndexName: 'by-gsi',
    KeyConditionExpression: 'gsi = :g AND #at < :at',
    ExpressionAttributeNames: { '#at': 'at' },
    ExpressionAttributeValues: { ':g': S('g0'), ':at': S('2026-01-08') },
    Limit: 3,
  });
  await query('query index with its own projection, projected again', {
    IndexName: 'by-gsi-include',
    KeyConditionExpression: 'gsi = :g',
    ProjectionExpression: 'n, #open, tags, #open.#page, sk',
    ExpressionAttributeNames: { '#open': 'open', '#page': '4' },
    ExpressionAttributeValues: { ':g': S('g0') },
  });
  await query('query projected, nested paths', {
    KeyConditionExpression: 'pk = :pk',
    ProjectionExpression: '#open.#page, n, nothing, tags, absent',
    ExpressionAttributeNames: { '#open': 'open', '#page': '3' },
    ExpressionAttributeValues: { ':pk': S('p0') },
  });
  await query('query empty partition', {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': S('none') },
  });
  keep('scan', await ddb.send(new ScanCommand({ TableName: table })));
  keep(
    'batch get',
    await ddb.send(
      new BatchGetItemCommand({
        RequestItems: {
          [table]: {
            Keys: [
              { pk: S('p0'), sk: S('s3') },
              { pk: S('p1'), sk: S('s4') },
            ],
          },
        },
      }),
    ),
  );
  keep(
    'transaction',
    await ddb.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: table, Item: item('p3', 's0', 3) } },
          {
            Update: {
              TableName: table,
              Key: { pk: S('p0'), sk: S('s6') },
              UpdateExpression: 'SET n = :n',
              ExpressionAttributeValues: { ':n': N(60) },
            },
          },
        ],
      }),
    ),
  );
  // Cancelled: an update of an existing item, a put of a new one, then a failing check.
  const cancelled = await ddb
    .send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: { pk: S('p0'), sk: S('s6') },
              UpdateExpression: 'SET n = :n REMOVE tags',
              ExpressionAttributeValues: { ':n': N(-1) },
            },
          },
          { Put: { TableName: table, Item: item('p4', 's0', 4) } },
          {
            ConditionCheck: {
              TableName: table,
              Key: { pk: S('p2'), sk: S('s2') },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    )
    .then(
      () => 'committed',
      (error: Error) => error.name,
    );
  answers.cancelled = cancelled;
  keep(
    'after cancelled',
    await ddb.send(new ScanCommand({ TableName: table, ConsistentRead: true })),
  );
  const { ShardIterator } = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: created.TableDescription?.LatestStreamArn,
      ShardId: 'shardId-00000001541626099285-f35f62ef',
      ShardIteratorType: 'TRIM_HORIZON',
    }),
  );
  const { Records = [] } = await streams.send(new GetRecordsCommand({ ShardIterator }));
  answers.records = Records.map((record) => ({
    ...record,
    eventID: typeof record.eventID,
    dynamodb: {
      ...record.dynamodb,
      ApproximateCreationDateTime: typeof record.dynamodb?.ApproximateCreationDateTime,
      // moto's estimate from a JSON dump, string sets in Python's per-process hash order.
      SizeBytes: typeof record.dynamodb?.SizeBytes,
    },
  }));
  ddb.destroy();
  streams.destroy();
  return answers;
}

/**
 * A versioned bucket, then `puts` written in order (each key's body is its name, so a repeat
 * is a new version) and `deletes` deleted (a delete marker becomes the key's newest version).
 */
async function versionedBucket(
  endpoint: string,
  bucket: string,
  puts: string[],
  deletes: string[],
): Promise<S3Client> {
  const s3 = new S3Client({ endpoint, forcePathStyle: true, maxAttempts: 1 });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(
    new PutBucketVersioningCommand({
      Bucket: bucket,
      VersioningConfiguration: { Status: 'Enabled' },
    }),
  );
  for (const key of puts) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
  }
  for (const key of deletes) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  return s3;
}

/**
 * Every ListObjectVersions answer of one scripted session over a versioned bucket (keys under
 * several prefixes, overwritten, deleted), with version ids numbered in order of appearance and
 * times blanked: they differ between any two runs.
 */
async function versionListings(endpoint: string, bucket: string) {
  const s3 = await versionedBucket(
    endpoint,
    bucket,
    ['a/1', 'a/2', 'a/b/3', 'ab/4', 'b/5', 'b/c/6', 'root', 'a/1', 'b/5'],
    ['a/2', 'b/c/6'],
  );
  const ids = new Map<string, string>();
  const numbered = (id?: string) => {
    if (id === undefined) return undefined;
    if (!ids.has(id)) ids.set(id, `v${ids.size}`);
    return ids.get(id);
  };
  const list = async (input: Omit<ListObjectVersionsCommandInput, 'Bucket'>) => {
    const { $metadata, ...answer } = await s3.send(
      new ListObjectVersionsCommand({ Bucket: bucket, ...input }),
    );
    return {
      ...answer,
      NextVersionIdMarker: numbered(answer.NextVersionIdMarker),
      VersionIdMarker: numbered(answer.VersionIdMarker),
      Versions: answer.Versions?.map((v) => ({
        ...v,
        VersionId: numbered(v.VersionId),
        LastModified: typeof v.LastModified,
      })),
      DeleteMarkers: answer.DeleteMarkers?.map((m) => ({
        ...m,
        VersionId: numbered(m.VersionId),
        LastModified: typeof m.LastModified,
      })),
    };
  };
  const answers: Record<string, unknown> = {
    whole: await list({}),
    a: await list({ Prefix: 'a/' }),
    aByFolder: await list({ Prefix: 'a', Delimiter: '/' }),
    b: await list({ Prefix: 'b/' }),
    none: await list({ Prefix: 'z/' }),
  };
  const first = await list({ Prefix: 'a', MaxKeys: 2 });
  answers.firstPage = first;
  // The next page through both markers (the marker version exists: bare moto resumes right).
  const reverse = new Map([...ids].map(([id, number]) => [number, id]));
  answers.secondPage = await list({
    Prefix: 'a',
    MaxKeys: 2,
    KeyMarker: first.NextKeyMarker,
    VersionIdMarker: reverse.get(String(first.NextVersionIdMarker)),
  });
  s3.destroy();
  return answers;
}

/**
 * Every ListObjectsV2 answer of one scripted session over a versioned bucket: keys under
 * neighbouring prefixes, overwritten, deleted (a delete marker is the newest), beyond ASCII;
 * listed whole, by prefix, from a start, page by page through continuation tokens, and by
 * folder (moto's own path). Times are blanked: they differ between any two runs.
 */
async function objectListings(endpoint: string, bucket: string) {
  const s3 = await versionedBucket(
    endpoint,
    bucket,
    ['a/1', 'a/2', 'a/b/3', 'a/é', 'a/z', 'ab/4', 'b/5', 'root', 'a/1'],
    ['a/2'],
  );
  const list = async (input: Omit<ListObjectsV2CommandInput, 'Bucket'>) => {
    const { $metadata, ...answer } = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, ...input }),
    );
    return {
      ...answer,
      Contents: answer.Contents?.map((o) => ({ ...o, LastModified: typeof o.LastModified })),
    };
  };
  const answers: Record<string, unknown> = {
    whole: await list({}),
    a: await list({ Prefix: 'a/' }),
    aUrl: await list({ Prefix: 'a/', EncodingType: 'url' }),
    afterB: await list({ Prefix: 'a', StartAfter: 'a/b/3' }),
    afterAll: await list({ Prefix: 'a/', StartAfter: 'a/zz' }),
    beforePrefix: await list({ Prefix: 'b/', StartAfter: 'a/1' }),
    none: await list({ Prefix: 'z/' }),
    noKeys: await list({ Prefix: 'a/', MaxKeys: 0 }),
    byFolder: await list({ Prefix: 'a', Delimiter: '/' }),
  };
  const pages: unknown[] = [];
  let token: string | undefined;
  do {
    const page = await list({ Prefix: 'a', MaxKeys: 2, ContinuationToken: token });
    pages.push(page);
    token = page.NextContinuationToken;
  } while (token && pages.length < 10);
  answers.pages = pages;
  s3.destroy();
  return answers;
}

/**
 * Requests sent at once (s3-serial-requests serves them one at a time): reads, listings by
 * prefix and from a start, writes and a DeleteObjects, each on keys no other request of the
 * burst touches, so every answer is the same whatever order they are served in; then what the
 * writes and the delete left. Every answer, times and ETags' quoting aside.
 */
async function requestsAtOnce(endpoint: string, bucket: string) {
  const s3 = new S3Client({ endpoint, forcePathStyle: true, maxAttempts: 1 });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const put = (key: string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `body of ${key}` }));
  const old = Array.from({ length: 12 }, (_, index) => `old/${index % 3}/${index}`);
  const gone = Array.from({ length: 6 }, (_, index) => `gone/${index}`);
  for (const key of [...old, ...gone]) await put(key);
  const list = async (input: Omit<ListObjectsV2CommandInput, 'Bucket'>) => {
    const { $metadata, ...answer } = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, ...input }),
    );
    return { ...answer, Contents: answer.Contents?.map(({ Key, Size }) => ({ Key, Size })) };
  };
  const burst = await Promise.all([
    ...old.map(async (key) => {
      const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return answer.Body?.transformToString();
    }),
    ...[0, 1, 2].map((folder) => list({ Prefix: `old/${folder}/` })),
    list({ Prefix: 'old/', StartAfter: 'old/1/' }),
    list({ Prefix: 'old/', Delimiter: '/' }),
    ...Array.from({ length: 8 }, (_, index) => put(`new/${index}`).then(() => `put ${index}`)),
    s3
      .send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: gone.map((Key) => ({ Key })) },
        }),
      )
      .then((answer) => answer.Deleted?.map((deleted) => deleted.Key).sort()),
  ]);
  const after = { new: await list({ Prefix: 'new/' }), gone: await list({ Prefix: 'gone/' }) };
  s3.destroy();
  return { burst, after };
}

describe('the launcher cost patches change no answer', () => {
  let bare: Emulator;
  let patched: Emulator;
  beforeAll(async () => {
    [bare, patched] = await Promise.all([startMoto({ command: 'moto_server' }), startMoto()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([bare?.stop(), patched?.stop()]);
  });

  it('DynamoDB and DynamoDB Streams: items, queries (paged, filtered, by index), transactions (committed and cancelled) and stream records answer as bare moto answers', async () => {
    const table = `cost-${randomUUID().slice(0, 8)}`;
    const [expected, actual] = [
      await session(bare.endpoint, table),
      await session(patched.endpoint, table),
    ];
    expect(Object.keys(actual).length).toBeGreaterThan(15);
    expect(actual.cancelled).toBe('TransactionCanceledException');
    expect((actual.records as unknown[]).length).toBeGreaterThan(15);
    expect(actual).toEqual(expected);
  });

  it('S3 ListObjectVersions: by prefix, by folder, paged, over overwritten and deleted keys, answers as bare moto answers', async () => {
    const bucket = `cost-${randomUUID().slice(0, 8)}`;
    const [expected, actual] = [
      await versionListings(bare.endpoint, bucket),
      await versionListings(patched.endpoint, bucket),
    ];
    const a = actual.a as { Versions: unknown[]; DeleteMarkers: unknown[] };
    expect(a.Versions.length).toBe(4);
    expect(a.DeleteMarkers.length).toBe(1);
    expect((actual.none as { Versions?: unknown[] }).Versions ?? []).toEqual([]);
    expect((actual.firstPage as { IsTruncated: boolean }).IsTruncated).toBe(true);
    expect(actual).toEqual(expected);
  });

  it('S3 requests sent at once, served one at a time: reads, listings, writes and a DeleteObjects answer as bare moto answers', async () => {
    const bucket = `cost-${randomUUID().slice(0, 8)}`;
    const [expected, actual] = await Promise.all([
      requestsAtOnce(bare.endpoint, bucket),
      requestsAtOnce(patched.endpoint, bucket),
    ]);
    expect(actual.burst[0]).toBe('body of old/0/0');
    expect(actual.burst.at(-1)).toEqual([0, 1, 2, 3, 4, 5].map((index) => `gone/${index}`));
    expect(actual.after.new.KeyCount).toBe(8);
    expect(actual.after.gone.KeyCount).toBe(0);
    expect(actual).toEqual(expected);
  });

  it('S3 ListObjectsV2: whole, by prefix, from a start, paged by token, by folder, over overwritten and deleted keys, answers as bare moto answers', async () => {
    const bucket = `cost-${randomUUID().slice(0, 8)}`;
    const [expected, actual] = [
      await objectListings(bare.endpoint, bucket),
      await objectListings(patched.endpoint, bucket),
    ];
    const keysOf = (answer: unknown) =>
      ((answer as { Contents?: { Key: string }[] }).Contents ?? []).map((o) => o.Key);
    expect(keysOf(actual.a)).toEqual(['a/1', 'a/b/3', 'a/z', 'a/é']);
    expect(keysOf(actual.afterB)).toEqual(['a/z', 'a/é', 'ab/4']);
    expect((actual.pages as unknown[]).length).toBe(3);
    expect(actual).toEqual(expected);
  });
});
