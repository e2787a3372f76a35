import { randomUUID } from 'node:crypto';
import {
  type Clock,
  type DeletionRecord,
  STREAM_TRANSITIONS,
  StreamDeletingError,
  StreamNotFoundError,
  type StreamRecord,
  streamPrefix,
  systemClock,
  TenantDeletingError,
} from '../core/index.ts';
import { RETRY, retry } from '../support/index.ts';
import { all, atGeneration, type Condition, equals, isAbsent, streamMay } from './conditions.ts';
import { keys, RETENTION_POLICIES, SWEEP_INDEX } from './layout.ts';
import type { OffboardingStore } from './offboarding-store.ts';
import {
  ingestEndChange as ingestEnd,
  partitionClaimChange,
  type RetentionRun,
  retentionChange,
  retentionRunChange,
  tombstoneChange,
} from './stream-changes.ts';
import { decodeToken, encodeToken, streamPage } from './stream-tokens.ts';
import type { Table, TransactItem } from './table.ts';

export interface StreamStoreOptions {
  readonly table: Table;
  readonly bucket: string;
  /** First path segment of every stream location. */
  readonly root: string;
  /** Seconds a client is told to wait before writing to a deleting stream again. */
  readonly retryAfterSeconds?: number;
  readonly clock?: Clock;
  /** Refuses a new stream while its tenant is being offboarded (checked in the same write). */
  readonly offboardings?: Pick<OffboardingStore, 'notOffboarding' | 'get'>;
}

/** A stream as an ingest was admitted to it, and that ingest's id, which ends it. */
export type AdmittedIngest = StreamRecord & { ingestId: string };

export interface CreateResult {
  created: boolean;
  stream: StreamRecord;
}

export interface StreamPage {
  streams: StreamRecord[];
  nextToken?: string;
}

/**
 * The stream item: every decision about a stream name is a condition expression, so
 * concurrent API calls cannot both win. The only code that writes a stream item.
 */
export class StreamStore {
  readonly #table: Table;
  readonly #bucket: string;
  readonly #root: string;
  readonly #retryAfter: number;
  readonly #clock: Clock;
  readonly #offboardings: StreamStoreOptions['offboardings'];

  constructor(options: StreamStoreOptions) {
    this.#offboardings = options.offboardings;
    this.#table = options.table;
    this.#bucket = options.bucket;
    this.#root = options.root;
    this.#retryAfter = options.retryAfterSeconds ?? 30;
    this.#clock = options.clock ?? systemClock;
  }

  /** Creates a new incarnation, or returns the ACTIVE one; refuses while a deletion runs. */
  async create(tenant: string, stream: string): Promise<CreateResult> {
    let previous: StreamRecord | undefined;
    return retry<CreateResult>(
      RETRY.contention,
      async () => {
        const now = this.#clock.now().toISOString();
        const generation = (previous?.generation ?? 0) + 1;
        const record: StreamRecord = {
          type: 'STREAM',
          tenant,
          stream,
          state: 'ACTIVE',
          generation,
          bucket: this.#bucket,
          prefix: streamPrefix(this.#root, tenant, stream, generation),
          createdAt: now,
          updatedAt: now,
        };
        // A name never used, or freed at exactly the generation this call saw.
        const free: Condition = previous
          ? all(streamMay('create'), atGeneration(previous.generation))
          : isAbsent;
        const written = await this.#put(record, free);
        if (written === 'offboarding') {
          const offboarding = await this.#offboardings?.get(tenant);
          throw new TenantDeletingError(tenant, offboarding?.offboardingId);
        }
        if (written.ok) return { done: true, value: { created: true, stream: record } };
        const old = written.old;
        if (old?.state === 'ACTIVE') return { done: true, value: { created: false, stream: old } };
        if (old?.state === 'DELETING') throw this.#deleting(old);
        previous = old;
        return { done: false, why: `create ${tenant}/${stream} lost a race` };
      },
      noWait,
    );
  }

  /** Puts a new incarnation; with offboardings known, only while its tenant is not offboarded. */
  async #put(record: StreamRecord, free: Condition) {
    const key = keys.stream(record.tenant, record.stream);
    if (!this.#offboardings) return this.#table.put(key, record, free);
    const result = await this.#table.transact([
      this.#offboardings.notOffboarding(record.tenant),
      this.#table.putItem({ ...key, ...record }, free),
    ]);
    if (result.ok) return { ok: true as const, item: record };
    if (result.failed.includes(0)) return 'offboarding' as const;
    return { ok: false as const, old: result.old as StreamRecord | undefined };
  }

  /** The stream, if it exists and is not DELETED. */
  async find(tenant: string, stream: string): Promise<StreamRecord | undefined> {
    return this.#table.read<StreamRecord>(keys.stream(tenant, stream));
  }

  async get(tenant: string, stream: string): Promise<StreamRecord> {
    const record = await this.find(tenant, stream);
    if (!record || record.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
    return record;
  }

  /** A page of the tenant's streams that are not DELETED, up to `limit` of them. */
  list(tenant: string, limit: number, nextToken?: string): Promise<StreamPage> {
    return streamPage(this.#table, tenant, limit, nextToken);
  }

  /** A page of the tenant's streams after `after` (by name), and the last name it read. */
  async listAfter(tenant: string, after: string | undefined, limit: number) {
    const token = after ? encodeToken({ ...keys.stream(tenant, after) }) : undefined;
    const { streams, nextToken } = await this.list(tenant, limit, token);
    return {
      streams,
      lastRead: nextToken ? decodeToken(tenant, nextToken).sk?.slice(7) : undefined,
    };
  }

  /**
   * Admits one ingest: the condition (ACTIVE) is decided by DynamoDB. The write is counted in
   * flight until `releaseIngest`, so a deletion requested meanwhile verifies its location only
   * after the write landed (or after the grace, if the writer died).
   */
  async admitIngest(tenant: string, stream: string): Promise<AdmittedIngest> {
    const ingestId = randomUUID();
    const written = await this.#table.update<StreamRecord>(keys.stream(tenant, stream), {
      update: 'SET lastIngestAt = :now ADD ingests :one, ingestsInFlight :id',
      values: { ':now': this.#clock.now().toISOString(), ':one': 1, ':id': new Set([ingestId]) },
      condition: streamMay('ingest'),
    });
    if (written.ok) return { ...written.item, ingestId };
    if (written.old?.state === 'DELETING') throw this.#deleting(written.old);
    throw new StreamNotFoundError(tenant, stream);
  }

  /** Ends an admitted ingest whose write was stored (`ingestEndChange`). */
  async releaseIngest(admitted: AdmittedIngest): Promise<void> {
    await this.#table.update(keys.stream(admitted.tenant, admitted.stream), ingestEnd(admitted));
  }

  /** Ends an admitted ingest whose write failed, which S3 may yet store (`ingestEndChange`). */
  async abandonIngest(admitted: AdmittedIngest): Promise<void> {
    const change = ingestEnd(admitted, this.#clock.now());
    await this.#table.update(keys.stream(admitted.tenant, admitted.stream), change);
  }

  /** The stream's part of the tombstone transaction (`tombstoneChange`). */
  tombstone(current: StreamRecord, deletion: DeletionRecord): TransactItem {
    const key = keys.stream(current.tenant, current.stream);
    return this.#table.updateItem(key, tombstoneChange(current, deletion));
  }

  /** The stream's part of expediting its deletion: it may start now, and refusals say so. */
  rescheduled(deletion: DeletionRecord, now: string): TransactItem {
    return this.#table.updateItem(keys.stream(deletion.tenant, deletion.stream), {
      update: 'SET executeAfter = :now, updatedAt = :now',
      values: { ':now': now },
      condition: this.#deletingBy(deletion),
    });
  }

  /** The stream's part of cancelling its deletion: DELETING by it -> ACTIVE, same generation. */
  restore(deletion: DeletionRecord, now: string): TransactItem {
    return this.#table.updateItem(keys.stream(deletion.tenant, deletion.stream), {
      update: 'SET #state = :to, updatedAt = :now REMOVE deletionId, executeAfter',
      names: { '#state': 'state' },
      values: { ':to': STREAM_TRANSITIONS.restore.to, ':now': now },
      condition: all(streamMay('restore'), this.#deletingBy(deletion)),
    });
  }

  /**
   * The stream's part of completing its deletion: DELETING by it -> DELETED, the name free, and
   * which deletion freed it (`deletedBy`). Its retention policy goes with it (and out of the
   * sweep index), as a new incarnation has none.
   */
  free(
    deletion: { tenant: string; stream: string; deletionId: string; generation: number },
    now: string,
  ): TransactItem {
    return this.#table.updateItem(keys.stream(deletion.tenant, deletion.stream), {
      update:
        'SET #state = :to, updatedAt = :now, deletedBy = :deletionId REMOVE deletionId, executeAfter, retentionDays, retentionRunOn, sweepPk, sweepSk',
      names: { '#state': 'state' },
      values: { ':to': STREAM_TRANSITIONS.free.to, ':now': now },
      condition: all(streamMay('free'), this.#deletingBy(deletion)),
    });
  }

  /**
   * The stream's part of requesting a partition deletion: it stays ACTIVE (writable) at its
   * generation and holds the deletion's id, one at a time; a holder that ended is replaced.
   */
  claimPartitions(current: StreamRecord, deletion: DeletionRecord, run?: RetentionRun) {
    const key = keys.stream(current.tenant, current.stream);
    return this.#table.updateItem(key, partitionClaimChange(current, deletion, run));
  }

  /** Lets the next partition deletion in, once this one ended (a no-op if another holds it). */
  async releasePartitions(deletion: DeletionRecord): Promise<void> {
    await this.#table.update(keys.stream(deletion.tenant, deletion.stream), {
      update: 'REMOVE partitionDeletionId',
      condition: equals('partitionDeletionId', deletion.deletionId),
    });
  }

  /**
   * Sets (or with `days` undefined removes) the stream's retention policy; a stream with one
   * sits in the sweep index's RETENTION partition, where the daily run finds it.
   */
  async setRetention(
    tenant: string,
    stream: string,
    days: number | undefined,
  ): Promise<StreamRecord> {
    const change = retentionChange(tenant, stream, days, this.#clock.now().toISOString());
    const written = await this.#table.update<StreamRecord>(keys.stream(tenant, stream), change);
    if (written.ok) return written.item;
    // The policy it has already: nothing to change.
    if (days !== undefined && written.old?.state === 'ACTIVE' && written.old.retentionDays === days)
      return written.old;
    if (!written.old || written.old.state === 'DELETED')
      throw new StreamNotFoundError(tenant, stream);
    throw this.#deleting(written.old);
  }

  /** Streams with a retention policy (the sweep index's RETENTION partition). */
  withRetention(): AsyncGenerator<StreamRecord> {
    return this.#table.query<StreamRecord>({
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: 'sweepPk = :retention',
      ExpressionAttributeValues: { ':retention': RETENTION_POLICIES },
    });
  }

  /**
   * Claims today's retention run of an ACTIVE stream whose policy is still `days` days: at most
   * one a day, however many sweeps. False if refused (run already, no longer ACTIVE at its
   * generation, or the policy removed or changed since it was read).
   */
  async claimRetentionRun(stream: StreamRecord, days: number, today: string): Promise<boolean> {
    const key = keys.stream(stream.tenant, stream.stream);
    return (await this.#table.update(key, retentionRunChange(stream, days, today))).ok;
  }

  /** The stream is held by this deletion, at its generation. */
  #deletingBy(deletion: { deletionId: string; generation: number }): Condition {
    return all(equals('deletionId', deletion.deletionId), atGeneration(deletion.generation));
  }

  /** The refusal of a write to a stream that is being deleted (409, with Retry-After). */
  refusal(stream: StreamRecord): StreamDeletingError {
    return this.#deleting(stream);
  }

  #deleting(stream: StreamRecord) {
    return new StreamDeletingError(stream, this.#retryAfter, this.#clock.now());
  }
}

/** A lost race on create is decided afresh at once: the condition saw the newer item. */
const noWait = async () => {};
