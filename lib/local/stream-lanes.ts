import type { DynamoDBRecord } from 'aws-lambda';
import { sleep } from '../support/index.ts';

/** Delivers one batch of records, retries and on-failure destination included. */
export type DeliverBatch = (records: DynamoDBRecord[]) => Promise<void>;

/** Milliseconds before a lane tries a batch again whose delivery threw (not the handler's error). */
const RETRY_MS = 250;

interface Lane {
  queue: DynamoDBRecord[];
  running?: Promise<void>;
}

/**
 * Lambda's concurrent batches per shard (`ParallelizationFactor`): up to `count` batches of one
 * shard in flight at once. Every record of one item (its partition and sort key) goes to the
 * same lane, where batches are delivered one after another, so an item's records keep their
 * order, as Lambda keeps them; records of other items do not wait for that item's batch. A lane
 * delivers what it holds when its batch before ends, up to `batchSize` records at a time.
 */
export class ShardLanes {
  readonly #lanes: Lane[];
  readonly #batchSize: number;
  readonly #deliver: DeliverBatch;
  readonly #active: () => boolean;
  readonly #log: ((message: string) => void) | undefined;

  constructor(options: {
    count: number;
    batchSize: number;
    deliver: DeliverBatch;
    /** False once the poller stops: lanes deliver no further batch. */
    active: () => boolean;
    log?: (message: string) => void;
  }) {
    this.#lanes = Array.from({ length: Math.max(1, options.count) }, () => ({ queue: [] }));
    this.#batchSize = options.batchSize;
    this.#deliver = options.deliver;
    this.#active = options.active;
    this.#log = options.log;
  }

  /** Records waiting in lanes, not yet in a batch. */
  get waiting(): number {
    return this.#lanes.reduce((sum, lane) => sum + lane.queue.length, 0);
  }

  /** As many records wait as would fill a batch in every lane: the shard reads no further. */
  get full(): boolean {
    return this.waiting >= this.#batchSize * this.#lanes.length;
  }

  /** Takes records in stream order, each to its item's lane. */
  add(records: DynamoDBRecord[]) {
    for (const record of records) {
      const lane = this.#lanes[laneOf(record, this.#lanes.length)] as Lane;
      lane.queue.push(record);
    }
    for (const lane of this.#lanes) this.#run(lane);
  }

  /** Resolves when no lane has a batch in flight. */
  async settled(): Promise<void> {
    while (this.#lanes.some((lane) => lane.running)) {
      await Promise.all(this.#lanes.map((lane) => lane.running));
    }
  }

  #run(lane: Lane) {
    if (lane.running || lane.queue.length === 0) return;
    lane.running = (async () => {
      while (lane.queue.length > 0 && this.#active()) {
        const batch = lane.queue.splice(0, this.#batchSize);
        try {
          await this.#deliver(batch);
        } catch (error) {
          // Delivery itself failed (e.g. the on-failure queue was unreachable): the batch is
          // not lost, it goes again first, as a shard that has not moved on replays it.
          this.#log?.(`stream lane: ${(error as Error).message}`);
          lane.queue.unshift(...batch);
          await sleep(RETRY_MS);
        }
      }
    })().finally(() => {
      lane.running = undefined;
      // Records that came while the last batch ended.
      if (this.#active()) this.#run(lane);
    });
  }
}

/** A shard's lanes for an event source whose parallelization factor is above 1; else none. */
export function lanesFor(
  source: { batchSize: number; parallelizationFactor?: number },
  deliver: DeliverBatch,
  active: () => boolean,
  log?: (message: string) => void,
): ShardLanes | undefined {
  const count = source.parallelizationFactor ?? 1;
  const { batchSize } = source;
  return count > 1
    ? new ShardLanes({ count, batchSize, deliver, active, ...(log ? { log } : {}) })
    : undefined;
}

/** The lane of a record's item: a hash of its keys (FNV-1a), so an item always has one lane. */
export function laneOf(record: DynamoDBRecord, count: number): number {
  const item = JSON.stringify(record.dynamodb?.Keys ?? {});
  let hash = 0x811c9dc5;
  for (let index = 0; index < item.length; index++) {
    hash ^= item.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}
