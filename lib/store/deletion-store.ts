import { randomUUID } from 'node:crypto';
import {
  type Clock,
  DeletionNotCancellableError,
  DeletionNotFoundError,
  DeletionNotScheduledError,
  type DeletionRecord,
  type DeletionRef,
  duplicate,
  type FailureReason,
  fenced,
  notRetryable,
  type Outcome,
  ok,
  systemClock,
} from '../core/index.ts';
import { RETRY, retry } from '../support/index.ts';
import { deletionChanges as changes, expiry, type RoundStart } from './deletion-changes.ts';
import { expireDeletionItems } from './deletion-items.ts';
import { keys } from './layout.ts';
import type { TakenIn } from './offboarding-store.ts';
import { type RequestContext, requestPartitions, retryPartitions } from './partition-requests.ts';
import type { RetentionRun } from './stream-changes.ts';
import type { StreamParts } from './stream-parts.ts';
import { requestStream } from './stream-requests.ts';
import type { Change, Table, TransactItem } from './table.ts';

export interface DeletionStoreOptions {
  readonly table: Table;
  /** The stream item's owner, for its part in the tombstone and completion transactions. */
  readonly streams: StreamParts;
  /** Days a finished receipt stays readable before DynamoDB's TTL removes it. @default 365 */
  readonly receiptRetentionDays?: number;
  readonly clock?: Clock;
  readonly newId?: () => string;
}

type StallCountOf = Parameters<typeof changes.claimStale>[3];

/** A lost race is decided afresh at once: the next read shows who won. */
const noWait = async () => {};

export interface DeletionRequest {
  created: boolean;
  deletion: DeletionRecord;
}

/**
 * The deletion item: every change of a deletion's state is one conditional write here (its
 * expression in deletion-changes.ts, its condition from the lifecycle table).
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
   * returns, the tombstone is durable. With a grace window the deletion is SCHEDULED until it
   * ends. A repeat returns the deletion already under way (its window unmoved). See
   * stream-requests.ts.
   */
  request(tenant: string, stream: string, graceSeconds = 0, takenIn?: TakenIn) {
    return requestStream(this.#context(tenant), { tenant, stream, graceSeconds, takenIn });
  }

  /**
   * A deletion of the stream's `dt=` partitions strictly before `before`, while the stream stays
   * ACTIVE and writable (see partition-requests.ts); a retention run's claims its day with it.
   */
  requestPartitions(
    tenant: string,
    stream: string,
    before: string,
    run?: RetentionRun,
  ): Promise<DeletionRequest> {
    return requestPartitions(this.#context(tenant), { tenant, stream, before, run });
  }

  #context(tenant: string): RequestContext {
    return {
      table: this.#table,
      streams: this.#streams,
      get: (id) => this.get(tenant, id),
      newId: this.#newId,
      clock: this.#clock,
    };
  }

  async get(tenant: string, deletionId: string): Promise<DeletionRecord | undefined> {
    return this.#table.read<DeletionRecord>(keys.deletion(tenant, deletionId));
  }

  /** Many deletions at once (BatchGetItem), in the order asked; absent ones undefined. */
  getMany(refs: Array<{ tenant: string; deletionId: string }>) {
    return this.#table.readMany<DeletionRecord>(
      refs.map((r) => keys.deletion(r.tenant, r.deletionId)),
    );
  }

  /** SCHEDULED -> PENDING once its grace window is over (the sweeper finds it due). */
  async begin(deletion: DeletionRecord): Promise<Outcome> {
    return this.#write(deletion, changes.begin(deletion, deletion.executeAfter, this.#now()));
  }

  /** SCHEDULED -> PENDING now, whatever its window said. */
  async expedite(tenant: string, deletionId: string): Promise<DeletionRecord> {
    return retry<DeletionRecord>(RETRY.contention, async () => {
      const deletion = await this.#scheduled(tenant, deletionId, DeletionNotScheduledError);
      const now = this.#now();
      const result = await this.#table.transact([
        this.#table.updateItem(this.#key(deletion), changes.begin(deletion, now, now)),
        this.#streams.rescheduled(deletion, now),
      ]);
      if (!result.ok) return { done: false, why: `expedite ${deletionId} lost a race` };
      const started = { ...deletion, state: 'PENDING' as const, executeAfter: now, updatedAt: now };
      return { done: true, value: started };
    });
  }

  /**
   * SCHEDULED -> CANCELLED, and its stream ACTIVE again with the same generation, in one
   * transaction. It races the deletion's start only through their conditions: one of the two
   * wins, and a cancelled deletion never listed, let alone deleted, anything.
   */
  async cancel(tenant: string, deletionId: string): Promise<DeletionRecord> {
    return retry<DeletionRecord>(
      RETRY.contention,
      async () => {
        const deletion = await this.#scheduled(tenant, deletionId, DeletionNotCancellableError);
        const now = this.#clock.now();
        const result = await this.#table.transact([
          this.#table.updateItem(
            this.#key(deletion),
            changes.cancel(deletion, now, this.#retentionDays),
          ),
          this.#streams.restore(deletion, now.toISOString()),
        ]);
        // Lost to the start (or to another cancel): the next read says which.
        if (!result.ok) return { done: false, why: `cancel ${deletionId} lost a race` };
        const at = now.toISOString();
        const cancelled = {
          ...deletion,
          state: 'CANCELLED' as const,
          cancelledAt: at,
          updatedAt: at,
        };
        return { done: true, value: cancelled };
      },
      noWait,
    );
  }

  /** PENDING -> RUNNING with its chains; with `token`, only by `markRegistering`'s holder. */
  async start(deletion: DeletionRef, chainsTotal: number, versioned: boolean, token?: string) {
    const round = { chainsTotal, versioned };
    return this.#write(deletion, changes.start(deletion, this.#now(), round, token));
  }

  /**
   * Marks the round as having its chains created one by one by the call holding `token`, before
   * the first is: from then on no transaction begins it (`ChainStore.begin` answers `duplicate`)
   * and only that call starts it. Fenced unless PENDING, or while another call holds it.
   */
  async markRegistering(deletion: DeletionRef, token: string): Promise<Outcome> {
    return this.#write(deletion, changes.registering(deletion, this.#clock.now(), token));
  }

  /** RUNNING -> PENDING with round + 1: the location is listed and dispatched afresh. */
  async nextRound(deletion: DeletionRecord, versioned = deletion.versioned ?? false) {
    return this.#write(deletion, changes.nextRound(deletion, versioned, this.#now()));
  }

  /**
   * RUNNING -> COMPLETED with the receipt's final totals, and the stream name becomes free for
   * a new incarnation, in one transaction. Then its chains, failures and uploads expire with it.
   */
  async complete(deletion: DeletionRecord): Promise<Outcome> {
    const now = this.#clock.now();
    const change = changes.complete(deletion, now, this.#retentionDays);
    const written = deletion.before
      ? this.#table.update(this.#key(deletion), change) // A partition's stream stays ACTIVE.
      : this.#table.transact([
          this.#table.updateItem(this.#key(deletion), change),
          this.#streams.free(deletion, now.toISOString()),
        ]);
    if (!(await written).ok) return fenced();
    if (deletion.before) await this.#streams.releasePartitions(deletion); // The next may come in.
    await expireDeletionItems(this.#table, deletion.deletionId, expiry(now, this.#retentionDays));
    return ok(undefined);
  }

  /** Ends a deletion as FAILED; its stream stays DELETING until a retry completes it. */
  async fail(deletion: DeletionRecord, reason?: FailureReason): Promise<Outcome> {
    const change = changes.fail(deletion, this.#clock.now(), this.#retentionDays, reason);
    return this.#write(deletion, change);
  }

  /** Starts a FAILED deletion again as a new round; one still to run is left as it is. */
  async retry(tenant: string, deletionId: string): Promise<DeletionRecord> {
    const seen = await this.get(tenant, deletionId);
    if (seen?.before) {
      return retryPartitions(this.#table, seen, changes.retry(this.#now()), () =>
        this.get(tenant, deletionId),
      );
    }
    const written = await this.#table.update<DeletionRecord>(
      keys.deletion(tenant, deletionId),
      changes.retry(this.#now()),
    );
    if (written.ok) return written.item;
    if (!written.old) throw new DeletionNotFoundError(tenant, deletionId);
    const { state } = written.old;
    if (state === 'COMPLETED' || state === 'CANCELLED') throw notRetryable(deletionId, state);
    return written.old;
  }

  /**
   * Marks progress on a running deletion for the sweeper, at most once per interval however
   * many workers ask: the write wins only if the last mark is older than `before`. Either way
   * the answer carries the deletion as it is, so the caller learns whether it still runs.
   */
  async heartbeat(ref: DeletionRef, before: Date): Promise<Outcome<DeletionRecord>> {
    const change = changes.heartbeat(ref, before, this.#now());
    const written = await this.#table.update<DeletionRecord>(this.#key(ref), change);
    if (written.ok) return ok(written.item);
    const current = written.old;
    const running = current?.state === 'RUNNING' && current.round === ref.round;
    return running ? duplicate(current) : fenced(current);
  }

  /** Its part in a round's transaction: it starts with its chains, one settles, one is added. */
  roundChains(deletion: DeletionRef, change: 'settled' | 'chainAdded' | RoundStart): TransactItem {
    const now = this.#now();
    const made =
      typeof change === 'string'
        ? changes[change](deletion, now)
        : changes.startWithChains(deletion, now, change);
    return this.#table.updateItem(this.#key(deletion), made);
  }

  /**
   * Claims the verification of a round whose chains have all settled, read first (each settle
   * asks; a refused write costs the item a write): the winner lists the location (or sweeper).
   */
  async claimVerification(deletion: DeletionRef): Promise<Outcome<DeletionRecord>> {
    const current = await this.#table.read<DeletionRecord>(this.#key(deletion));
    if (!changes.verifiable(current, deletion.round)) return duplicate(current);
    const change = changes.claimVerification(deletion, this.#now());
    const written = await this.#table.update<DeletionRecord>(this.#key(deletion), change);
    return written.ok ? ok(written.item) : duplicate(written.old);
  }

  /**
   * A stale deletion, claimed if nothing moved since the sweeper read it: for one more attempt,
   * or (`attempt` false) for the Stalled verdict, which is none. `count`: the sweeper's.
   */
  async claimStale(seen: DeletionRecord, attempt = true, count?: StallCountOf) {
    const counted = count ?? { stalls: (seen.stalls ?? 0) + 1, pagesDone: 0 };
    const change = changes.claimStale(seen, this.#now(), attempt, counted);
    const written = await this.#table.update<DeletionRecord>(this.#key(seen), change);
    return written.ok ? ok(written.item) : duplicate(written.old);
  }

  /** The deletion, if it is SCHEDULED; otherwise the refusal `refused` names. */
  async #scheduled(
    tenant: string,
    deletionId: string,
    refused: new (deletionId: string, state: string) => Error,
  ): Promise<DeletionRecord> {
    const deletion = await this.get(tenant, deletionId);
    if (!deletion) throw new DeletionNotFoundError(tenant, deletionId);
    if (deletion.state !== 'SCHEDULED') throw new refused(deletionId, deletion.state);
    return deletion;
  }

  async #write(deletion: DeletionRef, change: Change): Promise<Outcome> {
    const written = await this.#table.update(this.#key(deletion), change);
    return written.ok ? ok(undefined) : fenced();
  }

  #key(deletion: Pick<DeletionRef, 'tenant' | 'deletionId'>) {
    return keys.deletion(deletion.tenant, deletion.deletionId);
  }

  #now() {
    return this.#clock.now().toISOString();
  }
}
