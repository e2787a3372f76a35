import { randomUUID } from 'node:crypto';
import {
  type Clock,
  DELETION_TRANSITIONS,
  DeletionNotFoundError,
  DeletionNotRetryableError,
  type DeletionRecord,
  type DeletionRef,
  type DeletionTransition,
  duplicate,
  type FailureReason,
  fenced,
  type KeyFailure,
  type Outcome,
  ok,
  StreamNotFoundError,
  systemClock,
} from '../core/index.ts';
import { failpoint, RETRY, retry } from '../support/index.ts';
import { all, atRound, type Condition, deletionMay } from './conditions.ts';
import { keys, OPEN_DELETIONS, SWEEP_INDEX } from './layout.ts';
import type { StreamStore } from './stream-store.ts';
import type { Change, Table, TransactItem } from './table.ts';

export interface DeletionStoreOptions {
  readonly table: Table;
  /** The stream item's owner, for its part in the tombstone and completion transactions. */
  readonly streams: Pick<StreamStore, 'find' | 'tombstone' | 'free'>;
  /** Days a finished receipt stays readable before DynamoDB's TTL removes it. @default 365 */
  readonly receiptRetentionDays?: number;
  readonly clock?: Clock;
  readonly newId?: () => string;
}

export interface DeletionRequest {
  created: boolean;
  deletion: DeletionRecord;
}

/** Every chain of the round has settled, and nobody has claimed its verification yet. */
const roundIsUnverified: Condition = {
  expression:
    'chainsSettled >= chainsTotal AND (attribute_not_exists(verifiedRound) OR verifiedRound < :round)',
};

/** Open deletions carry the sweep index's keys: last progress first. */
const sweepKeys = (now: string) => ({ sweepPk: OPEN_DELETIONS, sweepSk: now });

/**
 * The deletion item (and its key failures): every change of a deletion's state is one
 * conditional write here, its condition taken from the lifecycle table.
 */
export class DeletionStore {
  readonly #table: Table;
  readonly #streams: DeletionStoreOptions['streams'];
  readonly #retentionDays: number;
  readonly #clock: Clock;
  readonly #newId: () => string;

  constructor(options: DeletionStoreOptions) {
    this.#table = options.table;
    this.#streams = options.streams;
    this.#retentionDays = options.receiptRetentionDays ?? 365;
    this.#clock = options.clock ?? systemClock;
    this.#newId = options.newId ?? randomUUID;
  }

  /**
   * Marks the stream DELETING and writes its deletion record in one transaction: when this
   * returns, the tombstone is durable. A repeat returns the deletion already under way.
   */
  async request(tenant: string, stream: string): Promise<DeletionRequest> {
    return retry<DeletionRequest>(RETRY.contention, async () => {
      const current = await this.#streams.find(tenant, stream);
      if (!current || current.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
      if (current.state === 'DELETING' && current.deletionId) {
        const deletion = await this.get(tenant, current.deletionId);
        if (deletion) return { done: true, value: { created: false, deletion } };
      }
      const now = this.#clock.now().toISOString();
      const deletion: DeletionRecord = {
        type: 'DELETION',
        deletionId: this.#newId(),
        tenant,
        stream,
        generation: current.generation,
        bucket: current.bucket,
        prefix: current.prefix,
        state: 'PENDING',
        round: 1,
        attempts: 1,
        objectsDeleted: 0,
        bytesDeleted: 0,
        failedObjects: 0,
        chainsTotal: 0,
        chainsSettled: 0,
        requestedAt: now,
        updatedAt: now,
      };
      const result = await this.#table.transact([
        this.#streams.tombstone(current, deletion.deletionId, now),
        this.#table.putItem(
          { ...keys.deletion(tenant, deletion.deletionId), ...deletion, ...sweepKeys(now) },
          deletionMay('request'),
        ),
      ]);
      if (!result.ok) return { done: false, why: `delete ${tenant}/${stream} lost a race` };
      failpoint('api.after-tombstone');
      return { done: true, value: { created: true, deletion } };
    });
  }

  async get(tenant: string, deletionId: string): Promise<DeletionRecord | undefined> {
    return this.#table.read<DeletionRecord>(keys.deletion(tenant, deletionId));
  }

  /** PENDING -> RUNNING once every chain of the round is registered. */
  async start(deletion: DeletionRef, chainsTotal: number, versioned: boolean): Promise<Outcome> {
    const now = this.#clock.now().toISOString();
    const written = await this.#table.update(
      keys.deletion(deletion.tenant, deletion.deletionId),
      this.#transition(deletion, 'start', {
        update: [
          'SET #state = :to, chainsTotal = :total, chainsSettled = :zero,',
          'versioned = :versioned, updatedAt = :now, sweepSk = :now',
        ].join(' '),
        values: { ':total': chainsTotal, ':zero': 0, ':versioned': versioned, ':now': now },
      }),
    );
    return written.ok ? ok(undefined) : fenced();
  }

  /** RUNNING -> PENDING with round + 1: the location is listed and dispatched afresh. */
  async nextRound(deletion: DeletionRecord, versioned = deletion.versioned ?? false) {
    const now = this.#clock.now().toISOString();
    const written = await this.#table.update(
      keys.deletion(deletion.tenant, deletion.deletionId),
      this.#transition(deletion, 'nextRound', {
        update: [
          'SET #state = :to, round = round + :one, chainsTotal = :zero, chainsSettled = :zero,',
          'versioned = :versioned, updatedAt = :now, sweepSk = :now',
        ].join(' '),
        values: { ':one': 1, ':zero': 0, ':now': now, ':versioned': versioned },
      }),
    );
    return written.ok ? ok(undefined) : fenced();
  }

  /**
   * RUNNING -> COMPLETED with the receipt's final totals, and the stream name becomes free for
   * a new incarnation, in one transaction.
   */
  async complete(deletion: DeletionRecord): Promise<Outcome> {
    const now = this.#clock.now();
    const ending = this.#ending(deletion, now);
    const result = await this.#table.transact([
      this.#table.updateItem(
        keys.deletion(deletion.tenant, deletion.deletionId),
        this.#transition(deletion, 'complete', {
          update: `${ending.update}, completedAt = :now REMOVE sweepPk, sweepSk`,
          values: ending.values,
        }),
      ),
      this.#streams.free(deletion, now.toISOString()),
    ]);
    return result.ok ? ok(undefined) : fenced();
  }

  /** Ends a deletion as FAILED; its stream stays DELETING until a retry completes it. */
  async fail(deletion: DeletionRecord, reason?: FailureReason): Promise<Outcome> {
    const ending = this.#ending(deletion, this.#clock.now());
    const written = await this.#table.update(
      keys.deletion(deletion.tenant, deletion.deletionId),
      this.#transition(deletion, 'fail', {
        update: `${ending.update}${reason ? ', reason = :reason' : ''} REMOVE sweepPk, sweepSk`,
        values: { ...ending.values, ...(reason ? { ':reason': reason } : {}) },
      }),
    );
    return written.ok ? ok(undefined) : fenced();
  }

  /** Starts a FAILED deletion again as a new round; a deletion still open is left as it is. */
  async retry(tenant: string, deletionId: string): Promise<DeletionRecord> {
    const now = this.#clock.now().toISOString();
    const written = await this.#table.update<DeletionRecord>(keys.deletion(tenant, deletionId), {
      update: [
        'SET #state = :to, round = round + :one, attempts = attempts + :one,',
        'failedObjects = :zero, chainsTotal = :zero, chainsSettled = :zero, updatedAt = :now,',
        'sweepPk = :open, sweepSk = :now REMOVE reason, expiresAt',
      ].join(' '),
      names: { '#state': 'state' },
      values: {
        ':to': DELETION_TRANSITIONS.retry.to,
        ':one': 1,
        ':zero': 0,
        ':now': now,
        ':open': OPEN_DELETIONS,
      },
      condition: deletionMay('retry'),
    });
    if (written.ok) return written.item;
    if (!written.old) throw new DeletionNotFoundError(tenant, deletionId);
    if (written.old.state === 'COMPLETED') {
      throw new DeletionNotRetryableError(`deletion ${deletionId} has already completed`);
    }
    return written.old;
  }

  /**
   * Marks progress on a running deletion for the sweeper, at most once per interval however
   * many workers ask: the write wins only if the last mark is older than `before`. Either way
   * the answer carries the deletion as it is, so the caller learns whether it still runs.
   */
  async heartbeat(ref: DeletionRef, before: Date): Promise<Outcome<DeletionRecord>> {
    const now = this.#clock.now().toISOString();
    const written = await this.#table.update<DeletionRecord>(
      keys.deletion(ref.tenant, ref.deletionId),
      {
        update: 'SET updatedAt = :now, sweepSk = :now',
        values: { ':now': now, ':before': before.toISOString() },
        condition: all(deletionMay('heartbeat'), atRound(ref.round), {
          expression: 'sweepSk < :before',
        }),
      },
    );
    if (written.ok) return ok(written.item);
    const current = written.old;
    const running = current?.state === 'RUNNING' && current.round === ref.round;
    return running ? duplicate(current) : fenced(current);
  }

  /**
   * The deletion's part in settling a chain: one more chain of its round has ended. Refused
   * unless the deletion is RUNNING in that round.
   */
  settled(deletion: DeletionRef): TransactItem {
    const now = this.#clock.now().toISOString();
    return this.#table.updateItem(keys.deletion(deletion.tenant, deletion.deletionId), {
      update: 'ADD chainsSettled :one SET updatedAt = :now, sweepSk = :now',
      values: { ':one': 1, ':now': now },
      condition: all(deletionMay('settle'), atRound(deletion.round)),
    });
  }

  /**
   * Claims the verification of a round whose chains have all settled: when the last chains
   * settle at the same moment, each of their workers sees the round ready, and only the one
   * that wins this write lists the location. A claimer that dies leaves it to the sweeper.
   */
  async claimVerification(deletion: DeletionRecord): Promise<Outcome> {
    const now = this.#clock.now().toISOString();
    const written = await this.#table.update(keys.deletion(deletion.tenant, deletion.deletionId), {
      // atRound binds :round.
      update: 'SET verifiedRound = :round, updatedAt = :now, sweepSk = :now',
      values: { ':now': now },
      condition: all(deletionMay('verify'), atRound(deletion.round), roundIsUnverified),
    });
    return written.ok ? ok(undefined) : duplicate();
  }

  /** Open deletions whose last progress is older than `cutoff`. */
  stale(cutoff: Date): AsyncGenerator<DeletionRecord> {
    return this.#table.query<DeletionRecord>({
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: 'sweepPk = :open AND sweepSk < :cutoff',
      ExpressionAttributeValues: { ':open': OPEN_DELETIONS, ':cutoff': cutoff.toISOString() },
    });
  }

  /**
   * Claims a stale deletion for one resume attempt: succeeds only if nothing moved since the
   * sweeper read it, so concurrent sweepers and late workers cannot both act on it.
   */
  async claimStale(seen: DeletionRecord): Promise<Outcome<DeletionRecord>> {
    const now = this.#clock.now().toISOString();
    const written = await this.#table.update<DeletionRecord>(
      keys.deletion(seen.tenant, seen.deletionId),
      {
        update: 'SET attempts = attempts + :one, updatedAt = :now, sweepSk = :now',
        names: { '#state': 'state' },
        values: { ':one': 1, ':now': now, ':seen': seen.state, ':updatedAt': seen.updatedAt },
        condition: all(deletionMay('resume'), atRound(seen.round), {
          expression: '#state = :seen AND updatedAt = :updatedAt',
        }),
      },
    );
    return written.ok ? ok(written.item) : duplicate(written.old);
  }

  /** Remembers keys that could not be deleted (idempotent: one item per key and round). */
  async recordFailures(deletion: DeletionRef, failures: KeyFailure[]): Promise<void> {
    await this.#table.putAll(
      failures.map((failure) => ({
        ...keys.failure(
          deletion.deletionId,
          deletion.round,
          failure.versionId ? `${failure.key}#${failure.versionId}` : failure.key,
        ),
        ...failure,
      })),
    );
  }

  /** The key failures of the deletion's current round, at most `limit` of them. */
  async failures(deletion: DeletionRecord, limit = 100): Promise<KeyFailure[]> {
    if (deletion.failedObjects === 0 && deletion.state !== 'RUNNING') return [];
    const scope = keys.failuresOf(deletion.deletionId, deletion.round);
    const { items } = await this.#table.queryPage<KeyFailure & { type?: string }>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :failures)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':failures': scope.skPrefix },
      Limit: limit,
    });
    return items.map(({ key, versionId, code, message }) => ({
      key,
      ...(versionId ? { versionId } : {}),
      code,
      message,
    }));
  }

  /**
   * A state change: allowed from the states the lifecycle names for `step`, in the round the
   * deletion was read at; `:to` is the state it moves to.
   */
  #transition(
    deletion: DeletionRef,
    step: DeletionTransition,
    change: { update: string; values: Record<string, unknown> },
  ): Change {
    return {
      update: change.update,
      names: { '#state': 'state' },
      values: { ...change.values, ':to': DELETION_TRANSITIONS[step].to },
      condition: all(deletionMay(step), atRound(deletion.round)),
    };
  }

  /** What ending a deletion writes (its final totals, its expiry) and when. */
  #ending(deletion: DeletionRecord, now: Date) {
    return {
      update: [
        'SET #state = :to, updatedAt = :now, expiresAt = :expires,',
        'objectsDeleted = :objects, bytesDeleted = :bytes, failedObjects = :failed',
      ].join(' '),
      values: {
        ':now': now.toISOString(),
        ':expires': Math.floor(now.getTime() / 1000) + this.#retentionDays * 86_400,
        ':objects': deletion.objectsDeleted,
        ':bytes': deletion.bytesDeleted,
        ':failed': deletion.failedObjects,
      },
    };
  }
}
