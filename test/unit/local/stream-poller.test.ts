import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
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
