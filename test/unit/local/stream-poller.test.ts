import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalEventSource } from '../../../lib/local/provision.ts';
import { StreamPoller } from '../../../lib/local/stream-poller.ts';

const STREAM_ARN = 'arn:aws:dynamodb:us-east-1:123456789012:table/lethe-table/stream/label';
const streams = mockClient(DynamoDBStreamsClient);

const source: LocalEventSource = {
  functionId: 'Dispatcher',
  kind: 'dynamodb',
  sourceArn: STREAM_ARN,
  batchSize: 10,
  reportBatchItemFailures: true,
  filters: [
    JSON.stringify({
      eventName: ['INSERT', 'MODIFY'],
      dynamodb: { NewImage: { type: { S: ['DELETION'] }, state: { S: ['PENDING'] } } },
    }),
  ],
  bisectOnError: true,
  maxRetries: 2,
};

/** A pending deletion's insert, as the table's stream carries it. */
const pending = (eventID: string, sequence: number, deletionId: string): _Record => ({
  eventID,
  eventName: 'INSERT',
  dynamodb: {
    SequenceNumber: String(sequence),
    NewImage: { type: { S: 'DELETION' }, state: { S: 'PENDING' }, deletionId: { S: deletionId } },
  },
});

const dispatched = (invoke: ReturnType<typeof vi.fn>) =>
  invoke.mock.calls.flatMap(([event]) =>
    (event as DynamoDBStreamEvent).Records.map(
      (record) => record.dynamodb?.NewImage?.deletionId?.S,
    ),
  );

describe('StreamPoller when moto swaps the table (and its stream) for a copy', () => {
  let poller: StreamPoller | undefined;
  const invoke = vi.fn(async () => ({ batchItemFailures: [] }));

  beforeEach(() => {
    streams.reset();
    invoke.mockClear();
    streams.on(DescribeStreamCommand).resolves({
      StreamDescription: {
        Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }],
      },
    });
    streams
      .on(GetShardIteratorCommand, { ShardIteratorType: 'TRIM_HORIZON' })
      .resolves({ ShardIterator: 'old-0' });
    // Registered first: the more specific answers below take precedence.
    streams.on(GetRecordsCommand).resolves({ Records: [], NextShardIterator: 'old-idle' });
    // The old copy: one real record and one a failed transaction left behind, then nothing.
    streams.on(GetRecordsCommand, { ShardIterator: 'old-0' }).resolves({
      Records: [pending('e1', 10, 'd1'), pending('e2', 11, 'phantom')],
      NextShardIterator: 'old-idle',
    });
    // The new copy numbers its next record 11 again.
    streams.on(GetRecordsCommand, { ShardIterator: 'new-0' }).resolves({
      Records: [pending('e1', 10, 'd1'), pending('e3', 11, 'd2')],
      NextShardIterator: 'new-idle',
    });
  });

  afterEach(async () => {
    await poller?.stop();
  });

  const start = () => {
    poller = new StreamPoller({
      streams: new DynamoDBStreamsClient({ region: 'us-east-1' }),
      sqs: new SQSClient({ region: 'us-east-1' }),
      source,
      invoke,
      queueUrlOf: () => undefined,
      region: 'us-east-1',
      idleMs: 1,
      reanchorMs: 0,
    });
    poller.start();
  };

  it('re-anchors an idle shard a few records back and delivers the new record once', async () => {
    streams
      .on(GetShardIteratorCommand, { ShardIteratorType: 'AT_SEQUENCE_NUMBER' })
      .resolves({ ShardIterator: 'new-0' });

    start();

    await vi.waitFor(() => expect(dispatched(invoke)).toContain('d2'));
    expect(dispatched(invoke)).toEqual(['d1', 'phantom', 'd2']);
    const anchor = streams
      .commandCalls(GetShardIteratorCommand)
      .map((call) => call.args[0].input)
      .find((input) => input.ShardIteratorType === 'AT_SEQUENCE_NUMBER');
    expect(anchor?.SequenceNumber).toBe('7');
  });

  it('starts after the last record read where a stream refuses a number no record has', async () => {
    streams
      .on(GetShardIteratorCommand, { ShardIteratorType: 'AT_SEQUENCE_NUMBER' })
      .rejects(new Error('InvalidArgument'));
    streams
      .on(GetShardIteratorCommand, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' })
      .resolves({ ShardIterator: 'new-0' });

    start();

    await vi.waitFor(() => expect(dispatched(invoke)).toContain('d2'));
    const after = streams
      .commandCalls(GetShardIteratorCommand)
      .map((call) => call.args[0].input)
      .find((input) => input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER');
    expect(after?.SequenceNumber).toBe('11');
  });
});

describe('StreamPoller with a parallelization factor', () => {
  let poller: StreamPoller | undefined;

  /** A pending deletion of the tenant, keyed as the table keys it. */
  const keyed = (eventID: string, sequence: number, deletionId: string): _Record => {
    const record = pending(eventID, sequence, deletionId);
    const keys = { pk: { S: 'TENANT#acme' }, sk: { S: `DELETION#${deletionId}` } };
    return { ...record, dynamodb: { ...record.dynamodb, Keys: keys } };
  };

  beforeEach(() => {
    streams.reset();
    streams.on(DescribeStreamCommand).resolves({
      StreamDescription: { Shards: [{ ShardId: 'shard-1' }] },
    });
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-0' });
    streams.on(GetRecordsCommand).resolves({ Records: [], NextShardIterator: 'it-idle' });
    // One deletion, then (on the next read) another of the same tenant: one partition key.
    streams
      .on(GetRecordsCommand, { ShardIterator: 'it-0' })
      .resolves({ Records: [keyed('e1', 1, 'd1')], NextShardIterator: 'it-1' });
    streams
      .on(GetRecordsCommand, { ShardIterator: 'it-1' })
      .resolves({ Records: [keyed('e2', 2, 'd2')], NextShardIterator: 'it-idle' });
  });

  afterEach(async () => {
    await poller?.stop();
  });

  it("dispatches a tenant's next deletion while the batch of its first is still running", async () => {
    // Arrange: the first deletion's invocation runs until released
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const invoke = vi.fn(async (event: DynamoDBStreamEvent) => {
      if (event.Records[0]?.dynamodb?.NewImage?.deletionId?.S === 'd1') await held;
      return { batchItemFailures: [] };
    });
    poller = new StreamPoller({
      streams: new DynamoDBStreamsClient({ region: 'us-east-1' }),
      sqs: new SQSClient({ region: 'us-east-1' }),
      source: { ...source, parallelizationFactor: 10 },
      invoke,
      queueUrlOf: () => undefined,
      region: 'us-east-1',
      idleMs: 1,
    });

    // Act
    poller.start();

    // Assess: d2 went to a lane of its own (its item's hash differs from d1's) and was not held
    await vi.waitFor(() => expect(dispatched(invoke)).toEqual(['d1', 'd2']));
    release();
  });
});

describe('StreamPoller retries, bisection and on-failure destination', () => {
  const sqs = mockClient(SQSClient);
  const FAILURES_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/dispatch-failures';
  let poller: StreamPoller | undefined;

  /** Records 1 to 4, each arriving a second after the one before. */
  const arrived = (sequence: number): _Record => {
    const record = pending(`e${sequence}`, sequence, `d${sequence}`);
    const at = new Date(Date.UTC(2024, 0, 1, 0, 0, sequence));
    return { ...record, dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: at } };
  };

  beforeEach(() => {
    streams.reset();
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({});
    streams.on(DescribeStreamCommand).resolves({
      StreamDescription: { Shards: [{ ShardId: 'shard-1' }] },
    });
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-0' });
    streams.on(GetRecordsCommand).resolves({ Records: [], NextShardIterator: 'it-idle' });
    streams.on(GetRecordsCommand, { ShardIterator: 'it-0' }).resolves({
      Records: [1, 2, 3, 4].map(arrived),
      NextShardIterator: 'it-idle',
    });
  });

  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });

  const start = (
    invoke: (event: DynamoDBStreamEvent) => Promise<unknown>,
    overrides: Partial<LocalEventSource>,
  ) => {
    const spy = vi.fn(invoke);
    poller = new StreamPoller({
      streams: new DynamoDBStreamsClient({ region: 'us-east-1' }),
      sqs: new SQSClient({ region: 'us-east-1' }),
      source: { ...source, onFailureArn: 'arn:failures', ...overrides },
      invoke: spy,
      queueUrlOf: (arn) => (arn === 'arn:failures' ? FAILURES_URL : undefined),
      region: 'us-east-1',
      idleMs: 1,
      reanchorMs: 60_000,
    });
    poller.start();
    return spy;
  };

  const batches = (invoke: ReturnType<typeof vi.fn>) =>
    invoke.mock.calls.map(([event]) =>
      (event as DynamoDBStreamEvent).Records.map((record) => record.dynamodb?.SequenceNumber),
    );
  const sent = () =>
    sqs
      .commandCalls(SendMessageCommand)
      .map((call) => JSON.parse(call.args[0].input.MessageBody ?? '{}'));

  it.each([
    ['an unknown sequence number', 'bogus'],
    ['an empty string', ''],
    ['null', null],
    ['a number', 3],
  ])(
    'retries the whole batch when one itemIdentifier is %s, next to a valid one',
    async (_, bad) => {
      // Arrange: record 3 fails, and the response also names an invalid identifier
      const invoke = start(
        async () => ({ batchItemFailures: [{ itemIdentifier: '3' }, { itemIdentifier: bad }] }),
        { bisectOnError: false, maxRetries: 1 },
      );

      // Assess: AWS treats the batch as a complete failure, so it is retried from its first record
      await vi.waitFor(() => expect(sent()).toHaveLength(1), { timeout: 3000 });
      expect(batches(invoke)).toEqual([
        ['1', '2', '3', '4'],
        ['1', '2', '3', '4'],
      ]);
      expect(sent()[0].DDBStreamBatchInfo).toMatchObject({
        startSequenceNumber: '1',
        batchSize: 4,
      });
    },
  );

  it('retries from the lowest failed record when every itemIdentifier is valid', async () => {
    const invoke = start(
      async () => ({ batchItemFailures: [{ itemIdentifier: '4' }, { itemIdentifier: '3' }] }),
      { bisectOnError: false, maxRetries: 1 },
    );

    await vi.waitFor(() => expect(sent()).toHaveLength(1), { timeout: 3000 });
    expect(batches(invoke)).toEqual([
      ['1', '2', '3', '4'],
      ['3', '4'],
    ]);
  });

  it('bisects on a function error at once, and retries only the half that still fails', async () => {
    // Arrange: the function throws on any batch holding record 3
    const invoke = start(
      async (event) => {
        if (event.Records.some((record) => record.dynamodb?.SequenceNumber === '3')) {
          throw new Error('malformed');
        }
        return { batchItemFailures: [] };
      },
      { bisectOnError: true, maxRetries: 2 },
    );

    // Assess: split without retrying the whole batch; record 3 alone uses its 2 retries
    await vi.waitFor(() => expect(batches(invoke)).toContainEqual(['4']), { timeout: 3000 });
    expect(batches(invoke)).toEqual([
      ['1', '2', '3', '4'],
      ['1', '2'],
      ['3', '4'],
      ['3'],
      ['3'],
      ['3'],
      ['4'],
    ]);
    expect(sent()).toEqual([
      expect.objectContaining({
        requestContext: expect.objectContaining({ approximateInvokeCount: 5 }),
        responseContext: {
          statusCode: 200,
          executedVersion: '$LATEST',
          functionError: 'Unhandled',
        },
        DDBStreamBatchInfo: expect.objectContaining({ startSequenceNumber: '3', batchSize: 1 }),
      }),
    ]);
  });

  it('never gives up with MaximumRetryAttempts -1 (unbounded)', async () => {
    streams.on(GetRecordsCommand, { ShardIterator: 'it-0' }).resolves({
      Records: [arrived(1)],
      NextShardIterator: 'it-idle',
    });
    const invoke = start(
      async () => {
        throw new Error('down');
      },
      { bisectOnError: true, maxRetries: -1 },
    );

    await vi.waitFor(() => expect(invoke.mock.calls.length).toBeGreaterThanOrEqual(4), {
      timeout: 5000,
    });
    expect(sent()).toEqual([]);
  });

  it('sends the on-failure destination the invocation record Lambda documents', async () => {
    // Arrange: record 2 fails every time, reported in a partial batch response
    start(async () => ({ batchItemFailures: [{ itemIdentifier: '2' }] }), { maxRetries: 0 });

    await vi.waitFor(() => expect(sent()).toHaveLength(1), { timeout: 3000 });
    const [record] = sent();
    expect(record).toEqual({
      requestContext: {
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:Dispatcher',
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: 1,
      },
      // A partial batch response is no function error: no functionError.
      responseContext: { statusCode: 200, executedVersion: '$LATEST' },
      version: '1.0',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      DDBStreamBatchInfo: {
        shardId: 'shard-1',
        startSequenceNumber: '2',
        endSequenceNumber: '4',
        approximateArrivalOfFirstRecord: '2024-01-01T00:00:02.000Z',
        approximateArrivalOfLastRecord: '2024-01-01T00:00:04.000Z',
        batchSize: 3,
        streamArn: STREAM_ARN,
      },
    });
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.QueueUrl).toBe(FAILURES_URL);
  });
});
