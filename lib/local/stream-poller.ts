import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { backoff, sleep } from '../table.ts';
import { passesFilters } from './filter.ts';
import type { LocalEventSource } from './provision.ts';

export type Invoke<E> = (event: E) => Promise<unknown>;

export interface StreamPollerOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly sqs: SQSClient;
  readonly source: LocalEventSource;
  readonly invoke: Invoke<DynamoDBStreamEvent>;
  /** Resolves an on-failure destination ARN to its queue URL. */
  readonly queueUrlOf: (arn: string) => string | undefined;
  readonly region: string;
  readonly idleMs?: number;
  readonly log?: (message: string) => void;
}

/**
 * Polls a DynamoDB stream the way Lambda's event source mapping does: every shard from the
 * trim horizon, records filtered by the mapping's criteria, batches of `BatchSize`, partial
 * batch failures retried from the first failed record, the batch bisected on error, and
 * records that exhaust their retries sent to the on-failure destination.
 */
export class StreamPoller {
  readonly #options: StreamPollerOptions;
  readonly #iterators = new Map<string, string | undefined>();
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(options: StreamPollerOptions) {
    this.#options = options;
  }

  start() {
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop() {
    this.#running = false;
    await this.#loop;
  }

  async #run() {
    const idleMs = this.#options.idleMs ?? 250;
    while (this.#running) {
      let delivered = 0;
      try {
        await this.#discoverShards();
        for (const [shardId, iterator] of this.#iterators) {
          if (!iterator || !this.#running) continue;
          delivered += await this.#pollShard(shardId, iterator);
        }
      } catch (error) {
        this.#options.log?.(`stream poller: ${(error as Error).message}`);
      }
      if (delivered === 0) await sleep(idleMs);
    }
  }

  async #discoverShards() {
    const { streams, source } = this.#options;
    let start: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: source.sourceArn, ExclusiveStartShardId: start }),
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        if (!shard.ShardId || this.#iterators.has(shard.ShardId)) continue;
        const { ShardIterator } = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: source.sourceArn,
            ShardId: shard.ShardId,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        );
        this.#iterators.set(shard.ShardId, ShardIterator);
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  async #pollShard(shardId: string, iterator: string): Promise<number> {
    const { streams, source } = this.#options;
    const { Records = [], NextShardIterator } = await streams.send(
      new GetRecordsCommand({ ShardIterator: iterator, Limit: source.batchSize }),
    );
    const records = Records.map((record) => this.#toLambdaRecord(record)).filter((record) =>
      passesFilters(record, source.filters),
    );
    if (records.length > 0) await this.#deliver(shardId, records);
    // Only now does the shard move on: a crash before this point replays the batch.
    this.#iterators.set(shardId, NextShardIterator);
    return Records.length;
  }

  async #deliver(shardId: string, records: DynamoDBRecord[]): Promise<void> {
    const { source } = this.#options;
    let pending = records;
    for (let attempt = 0; pending.length > 0; attempt++) {
      const failedFrom = await this.#invoke(pending);
      if (failedFrom < 0) return;
      pending = pending.slice(failedFrom);
      if (attempt >= source.maxRetries) {
        if (source.bisectOnError && pending.length > 1) {
          const middle = Math.ceil(pending.length / 2);
          await this.#deliver(shardId, pending.slice(0, middle));
          await this.#deliver(shardId, pending.slice(middle));
        } else {
          await this.#sendToOnFailure(shardId, pending, attempt + 1);
        }
        return;
      }
      await sleep(backoff(attempt, 200, 5_000));
    }
  }

  /** Index of the first failed record, or -1 when the whole batch succeeded. */
  async #invoke(records: DynamoDBRecord[]): Promise<number> {
    try {
      const response = (await this.#options.invoke({ Records: records })) as
        | { batchItemFailures?: Array<{ itemIdentifier: string }> }
        | undefined;
      const failures = this.#options.source.reportBatchItemFailures
        ? (response?.batchItemFailures ?? [])
        : [];
      if (failures.length === 0) return -1;
      const failed = new Set(failures.map((failure) => failure.itemIdentifier));
      const index = records.findIndex((record) =>
        failed.has(record.dynamodb?.SequenceNumber ?? ''),
      );
      return Math.max(index, 0);
    } catch (error) {
      this.#options.log?.(`dispatcher invocation failed: ${(error as Error).message}`);
      return 0;
    }
  }

  async #sendToOnFailure(shardId: string, records: DynamoDBRecord[], invokeCount: number) {
    const { source, sqs, queueUrlOf, log } = this.#options;
    const first = records[0]?.dynamodb;
    const last = records.at(-1)?.dynamodb;
    log?.(`stream records ${first?.SequenceNumber}..${last?.SequenceNumber} exhausted retries`);
    const url = source.onFailureArn ? queueUrlOf(source.onFailureArn) : undefined;
    if (!url) return;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: JSON.stringify({
          requestContext: {
            condition: 'RetryAttemptsExhausted',
            approximateInvokeCount: invokeCount,
            functionArn: source.functionId,
          },
          responseContext: { statusCode: 200, functionError: 'Unhandled' },
          version: '1.0',
          timestamp: new Date().toISOString(),
          DDBStreamBatchInfo: {
            shardId,
            startSequenceNumber: first?.SequenceNumber,
            endSequenceNumber: last?.SequenceNumber,
            batchSize: records.length,
            streamArn: source.sourceArn,
          },
        }),
      }),
    );
  }

  #toLambdaRecord(record: _Record): DynamoDBRecord {
    const { dynamodb } = record;
    return {
      eventID: record.eventID,
      eventName: record.eventName,
      eventVersion: record.eventVersion ?? '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: this.#options.region,
      eventSourceARN: this.#options.source.sourceArn,
      dynamodb: {
        ...(dynamodb as DynamoDBRecord['dynamodb']),
        ApproximateCreationDateTime: dynamodb?.ApproximateCreationDateTime
          ? Math.floor(new Date(dynamodb.ApproximateCreationDateTime).getTime() / 1000)
          : Math.floor(Date.now() / 1000),
      },
    } as DynamoDBRecord;
  }
}
