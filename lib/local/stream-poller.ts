import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { backoff, sleep } from '../support/index.ts';
import { failedIndexes, invocationRecord } from './batch-outcomes.ts';
import { passesFilters } from './filter.ts';
import type { LocalEventSource } from './provision.ts';
import { lanesFor, type ShardLanes } from './stream-lanes.ts';
import { noPositions, ShardProgress, type StreamPositions } from './stream-positions.ts';

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
  /** Milliseconds between looks for new shards. @default 10000 */
  readonly discoverMs?: number;
  /** Least milliseconds between re-anchorings of an idle shard's iterator. @default 1000 */
  readonly reanchorMs?: number;
  /** Where each shard's position is kept across restarts. @default kept nowhere */
  readonly positions?: StreamPositions;
  /** Least milliseconds between two saves of a shard's position (and one at stop). @default 1000 */
  readonly saveEveryMs?: number;
  readonly log?: (message: string) => void;
}

/** Where the poller is in one shard. */
interface ShardCursor {
  iterator: string | undefined;
  startingSequence?: string;
  /** Highest sequence number read so far. */
  last?: bigint;
  /** Event ids read lately: a re-anchored iterator re-reads a few records, delivered once. */
  recent: string[];
  reanchoredAt: number;
  /** With a parallelization factor: the shard's lanes, which deliver while it reads on. */
  lanes?: ShardLanes;
  /** The records read and not yet processed, and the position they leave. */
  progress: ShardProgress;
  /** The position saved last, and when. */
  saved?: bigint;
  savedAt: number;
}

/** Records a re-anchored iterator reads again: more than a failed transaction can leave behind. */
const REWIND = 4n;
/** Event ids remembered: enough for the records a re-anchored iterator reads again. */
const RECENT = 64;
/** Records per GetRecords, DynamoDB Streams' maximum. */
const READ_LIMIT = 1000;

/**
 * Polls a DynamoDB stream the way Lambda's event source mapping does: every shard from the
 * position kept for it (after the last record processed), else from the trim horizon, records
 * filtered by the mapping's criteria, batches of `BatchSize`, partial
 * batch failures retried from the first failed record, the batch bisected on error, and
 * records that exhaust their retries sent to the on-failure destination. With a parallelization
 * factor above 1, up to that many batches of a shard at once, in order per item (ShardLanes).
 */
export class StreamPoller {
  readonly #options: StreamPollerOptions;
  readonly #shards = new Map<string, ShardCursor>();
  #running = false;
  #loop: Promise<void> | undefined;
  #discoveredAt = Number.NEGATIVE_INFINITY;

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
    await Promise.all([...this.#shards.values()].map((shard) => shard.lanes?.settled()));
    await Promise.all(
      [...this.#shards].map(([shardId, cursor]) =>
        this.#savePosition(shardId, cursor, true).catch((error: Error) =>
          this.#options.log?.(`stream poller: ${error.message}`),
        ),
      ),
    );
  }

  async #run() {
    const idleMs = this.#options.idleMs ?? 250;
    while (this.#running) {
      let delivered = 0;
      try {
        // Shards change rarely (moto has one per table): not worth a request every poll.
        if (Date.now() - this.#discoveredAt >= (this.#options.discoverMs ?? 10_000)) {
          await this.#discoverShards();
          this.#discoveredAt = Date.now();
        }
        for (const [shardId, cursor] of this.#shards) {
          if (!cursor.iterator || !this.#running) continue;
          delivered += await this.#pollShard(shardId, cursor);
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
        if (!shard.ShardId || this.#shards.has(shard.ShardId)) continue;
        const id = shard.ShardId;
        const kept = await (this.#options.positions ?? noPositions).read(source.sourceArn, id);
        const position = kept === undefined ? undefined : BigInt(kept);
        const progress = new ShardProgress(position);
        const deliver = async (batch: DynamoDBRecord[]) => {
          if (await this.#deliver(id, batch)) progress.done(batch.map(sequenceOf));
        };
        const lanes = lanesFor(source, deliver, () => this.#running, this.#options.log);
        this.#shards.set(id, {
          iterator: await this.#iteratorFrom(id, kept),
          startingSequence: shard.SequenceNumberRange?.StartingSequenceNumber,
          recent: [],
          reanchoredAt: Date.now(),
          ...(lanes ? { lanes } : {}),
          progress,
          savedAt: Date.now(),
          ...(position === undefined ? {} : { last: position, saved: position }),
        });
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  /** An iterator after the kept position, or from the trim horizon (none kept, or trimmed). */
  async #iteratorFrom(shardId: string, kept: string | undefined): Promise<string | undefined> {
    const { streams, source } = this.#options;
    const at = (position: { ShardIteratorType: ShardIteratorType; SequenceNumber?: string }) =>
      streams.send(
        new GetShardIteratorCommand({ StreamArn: source.sourceArn, ShardId: shardId, ...position }),
      );
    if (kept !== undefined) {
      try {
        const after = { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: kept };
        return (await at(after)).ShardIterator;
      } catch (error) {
        this.#options.log?.(
          `stream poller: shard ${shardId} has no record ${kept} any more (${(error as Error).message}): from its trim horizon`,
        );
      }
    }
    return (await at({ ShardIteratorType: 'TRIM_HORIZON' })).ShardIterator;
  }

  /** Saves the shard's position when it moved, at most every saveEveryMs (or now, at stop). */
  async #savePosition(shardId: string, cursor: ShardCursor, now = false) {
    const { positions, saveEveryMs = 1000, source } = this.#options;
    const position = cursor.progress.position;
    if (!positions || position === undefined || position === cursor.saved) return;
    if (!now && Date.now() - cursor.savedAt < saveEveryMs) return;
    cursor.savedAt = Date.now();
    await positions.save(source.sourceArn, shardId, String(position));
    cursor.saved = position;
  }

  async #pollShard(shardId: string, cursor: ShardCursor): Promise<number> {
    const { streams, source } = this.#options;
    // Lanes with a full batch each waiting read on once they have taken some in.
    const lanes = cursor.lanes;
    if (lanes?.full) return 0;
    // Read as much as a call returns, as Lambda does, then batch what passes the filters.
    const { Records = [], NextShardIterator } = await streams.send(
      new GetRecordsCommand({ ShardIterator: cursor.iterator, Limit: READ_LIMIT }),
    );
    const unseen = Records.filter((record) => !cursor.recent.includes(record.eventID ?? ''));
    const records = unseen
      .map((record) => this.#toLambdaRecord(record))
      .filter((record) => passesFilters(record, source.filters));
    const { progress } = cursor;
    const read = unseen.map(sequenceOf);
    progress.read(read);
    // What the filters drop is processed once read, as Lambda moves past it.
    const kept = new Set(records.map(sequenceOf));
    progress.done(read.filter((sequence) => !kept.has(sequence)));
    for (let start = 0; !lanes && start < records.length; start += source.batchSize) {
      const batch = records.slice(start, start + source.batchSize);
      if (await this.#deliver(shardId, batch)) progress.done(batch.map(sequenceOf));
    }
    lanes?.add(records);
    await this.#savePosition(shardId, cursor);
    if (!this.#running) return 0;
    // Only now does the shard move on: a crash before this point replays the batch (in lanes,
    // the lane retries it).
    for (const [index, record] of unseen.entries()) {
      cursor.recent.push(record.eventID ?? '');
      const sequence = read[index] as bigint;
      if (cursor.last === undefined || sequence > cursor.last) cursor.last = sequence;
    }
    cursor.recent.splice(0, Math.max(0, cursor.recent.length - RECENT));
    const reanchored = Records.length === 0 ? await this.#reanchor(shardId, cursor) : undefined;
    cursor.iterator = reanchored ?? NextShardIterator;
    return Records.length;
  }

  /**
   * An idle shard's iterator is taken afresh now and then, a few records back. moto replaces a
   * table with a deep copy of itself when a TransactWriteItems fails a condition, stream and
   * all: an iterator of the old copy never sees another record, and the new copy numbers its
   * next records from where the copy was taken. Re-read records are recognised by event id.
   */
  async #reanchor(shardId: string, cursor: ShardCursor): Promise<string | undefined> {
    const now = Date.now();
    if (now - cursor.reanchoredAt < (this.#options.reanchorMs ?? 1000)) return undefined;
    cursor.reanchoredAt = now;
    const { streams, source } = this.#options;
    const from = cursor.last === undefined ? undefined : cursor.last - REWIND;
    const floor = cursor.startingSequence ? BigInt(cursor.startingSequence) : undefined;
    const attempts =
      from === undefined || (floor !== undefined && from < floor)
        ? [{ ShardIteratorType: 'TRIM_HORIZON' as const }]
        : [
            { ShardIteratorType: 'AT_SEQUENCE_NUMBER' as const, SequenceNumber: String(from) },
            // Streams whose sequence numbers are not consecutive (DynamoDB's own) refuse a
            // number no record has: start after the last record read instead.
            {
              ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const,
              SequenceNumber: String(cursor.last),
            },
          ];
    for (const position of attempts) {
      try {
        const { ShardIterator } = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: source.sourceArn,
            ShardId: shardId,
            ...position,
          }),
        );
        if (ShardIterator) return ShardIterator;
      } catch {
        // try the next position; without any, the shard keeps its iterator
      }
    }
    return undefined;
  }

  /**
   * Delivers a batch as Lambda's stream event source mapping does. A partial batch response is
   * retried from its lowest failed record; a thrown error (a function error) retries the whole
   * batch, or with BisectBatchOnFunctionError splits a batch of more than one record in two at
   * once, each half delivered in turn. A split is not a retry (AWS: "splitting a batch does not
   * count towards the retry quota"): a half starts with the retries its records had used. After
   * MaximumRetryAttempts retries the records go to the on-failure destination; -1 is unbounded
   * (AWS retries until the record expires; locally, never gives up). True once the records are
   * processed (delivered, or given up on); false when the runtime stopped first.
   */
  async #deliver(
    shardId: string,
    records: DynamoDBRecord[],
    used = 0,
    invoked = 0,
  ): Promise<boolean> {
    const { maxRetries, bisectOnError } = this.#options.source;
    let pending = records;
    for (let retries = used, invokes = invoked + 1; ; retries++, invokes++) {
      const { from, threw } = await this.#invoke(pending);
      if (from < 0) return true;
      pending = pending.slice(from);
      // A stopped runtime stops retrying at once; the shard has not moved on past these.
      if (!this.#running) return false;
      if (threw && bisectOnError && pending.length > 1) {
        const middle = Math.ceil(pending.length / 2);
        const first = await this.#deliver(shardId, pending.slice(0, middle), retries, invokes);
        return first && (await this.#deliver(shardId, pending.slice(middle), retries, invokes));
      }
      if (maxRetries >= 0 && retries >= maxRetries) {
        await this.#discard(shardId, pending, invokes, threw);
        return true;
      }
      await sleep(backoff(retries - used, 200, 5_000));
    }
  }

  /** Index of the first record to retry (-1: none), and whether the function threw. */
  async #invoke(records: DynamoDBRecord[]): Promise<{ from: number; threw: boolean }> {
    const { invoke, source, log } = this.#options;
    try {
      const response = await invoke({ Records: records });
      if (!source.reportBatchItemFailures) return { from: -1, threw: false };
      // The checkpoint is the lowest failed sequence number; an invalid identifier: the first.
      const sequences = records.map((record) => record.dynamodb?.SequenceNumber);
      const failed = failedIndexes(response, sequences);
      return { from: failed.length === 0 ? -1 : Math.min(...failed), threw: false };
    } catch (error) {
      log?.(`dispatcher invocation failed: ${(error as Error).message}`);
      return { from: 0, threw: true };
    }
  }

  /** Gives up on records: logs them and sends the on-failure destination their batch's record. */
  async #discard(shardId: string, records: DynamoDBRecord[], invokes: number, threw: boolean) {
    const { source, sqs, queueUrlOf, region, log } = this.#options;
    const [first, last] = [records[0]?.dynamodb, records.at(-1)?.dynamodb];
    log?.(`stream records ${first?.SequenceNumber}..${last?.SequenceNumber} exhausted retries`);
    const url = source.onFailureArn ? queueUrlOf(source.onFailureArn) : undefined;
    if (!url) return;
    const record = invocationRecord({ source, region, shardId, records, invokes, threw });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(record) }));
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

const sequenceOf = (record: { dynamodb?: { SequenceNumber?: string } }) =>
  BigInt(record.dynamodb?.SequenceNumber ?? '0');
