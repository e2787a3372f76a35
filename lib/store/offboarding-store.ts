import { randomUUID } from 'node:crypto';
import {
  type Clock,
  type DeletionRecord,
  OFFBOARDING_TRANSITIONS,
  type OffboardingLink,
  type OffboardingRecord,
  systemClock,
} from '../core/index.ts';
import { equals, exists, isAbsent, offboardingMay, offboardingTakesIn } from './conditions.ts';
import { keys, RUNNING_OFFBOARDINGS, SWEEP_INDEX } from './layout.ts';
import type { Change, Table, TransactItem } from './table.ts';

/**
 * An offboarding taking a stream in (`DeletionStore.request`): the new deletion names it, and
 * its link joins the tombstone's transaction.
 */
export interface TakenIn {
  readonly offboardingId: string;
  readonly linkItems: (deletion: DeletionRecord) => TransactItem[];
}

/**
 * The offboarding item of a tenant (one at a time) and its links to the deletions it took in:
 * the only code that writes them. A running offboarding sits in the sweep index, where the
 * sweeper finds it to complete (or finish cancelling) it.
 */
export class OffboardingStore {
  readonly #table: Table;
  readonly #clock: Clock;

  constructor(options: { readonly table: Table; readonly clock?: Clock }) {
    this.#table = options.table;
    this.#clock = options.clock ?? systemClock;
  }

  /** A new RUNNING offboarding, unless one is under way: then that one (`created: false`). */
  async request(
    tenant: string,
    graceSeconds: number,
  ): Promise<{ created: boolean; offboarding: OffboardingRecord }> {
    const now = this.#clock.now();
    const at = now.toISOString();
    const offboarding: OffboardingRecord = {
      type: 'OFFBOARDING',
      tenant,
      offboardingId: randomUUID(),
      state: OFFBOARDING_TRANSITIONS.request.to,
      requestedAt: at,
      executeAfter: new Date(now.getTime() + graceSeconds * 1000).toISOString(),
      updatedAt: at,
      fannedOut: false,
      streams: 0,
    };
    const written = await this.#table.put(
      keys.offboarding(tenant),
      offboarding,
      offboardingMay('request'),
      { sweepPk: RUNNING_OFFBOARDINGS, sweepSk: `${at}#${tenant}`, fanoutDue: true },
    );
    if (written.ok) return { created: true, offboarding };
    if (written.old) return { created: false, offboarding: written.old };
    return this.request(tenant, graceSeconds);
  }

  async get(tenant: string): Promise<OffboardingRecord | undefined> {
    return this.#table.read<OffboardingRecord>(keys.offboarding(tenant));
  }

  /** The transaction part that refuses a new stream while the tenant is being offboarded. */
  notOffboarding(tenant: string): TransactItem {
    return this.#table.checkItem(keys.offboarding(tenant), offboardingMay('request'));
  }

  /**
   * Takes one stream in, once, while the offboarding runs: link and count move together (a
   * repeated step counts nothing twice), in the tombstone's transaction for a deletion it
   * requests (none goes unlinked). The count clears `fanoutDue`: only a step's own write
   * (`request`, `advance`) asks for the next step, not each stream the step takes in.
   */
  linkItems(
    offboarding: OffboardingRecord,
    stream: string,
    deletionId: string,
    adopted = false,
  ): TransactItem[] {
    const { offboardingId, tenant } = offboarding;
    const link: OffboardingLink = {
      offboardingId,
      tenant,
      stream,
      deletionId,
      ...(adopted ? { adopted } : {}),
    };
    return [
      this.#table.putItem({ ...keys.offboardingLink(offboardingId, stream), ...link }, isAbsent),
      this.#table.updateItem(keys.offboarding(tenant), {
        update: 'ADD streams :one REMOVE fanoutDue',
        values: { ':one': 1 },
        condition: offboardingTakesIn(offboardingId),
      }),
    ];
  }

  /**
   * Takes in a stream whose deletion was requested before it (by the tenant, say), once: as
   * adopted, which a cancel of the offboarding leaves to its own schedule. The deletion names
   * the offboarding, as one it requested does, so its completion counts.
   */
  async link(offboarding: OffboardingRecord, stream: string, deletionId: string): Promise<boolean> {
    const linked = await this.#table.transact([
      ...this.linkItems(offboarding, stream, deletionId, true),
      this.#table.updateItem(keys.deletion(offboarding.tenant, deletionId), {
        update: 'SET offboardingId = :offboarding',
        values: { ':offboarding': offboarding.offboardingId },
        condition: exists,
      }),
    ]);
    return linked.ok;
  }

  /**
   * Counts a deletion it took in that has COMPLETED, once: the link is marked and the count
   * moves in one transaction, conditional on the link naming this deletion and not being marked
   * yet. False when the deletion is not (or no longer) linked to this offboarding, or was
   * counted before: a repeated stream record counts nothing twice. The count is an item of its
   * own: a write to the offboarding item during its fan-out would ask for a fan-out step.
   */
  async countCompleted(
    offboarding: Pick<OffboardingRecord, 'offboardingId'>,
    stream: string,
    deletionId: string,
  ): Promise<boolean> {
    const linked = equals('deletionId', deletionId);
    const result = await this.#table.transact([
      this.#table.updateItem(keys.offboardingLink(offboarding.offboardingId, stream), {
        update: 'SET completed = :true',
        values: { ':true': true },
        condition: {
          ...linked,
          expression: `${linked.expression} AND attribute_not_exists(completed)`,
        },
      }),
      this.#table.updateItem(keys.offboardingCompleted(offboarding.offboardingId), {
        update: 'ADD deletions :one',
        values: { ':one': 1 },
      }),
    ]);
    return result.ok;
  }

  /** Its deletions counted as COMPLETED so far (`countCompleted`). */
  async completedCount(offboarding: Pick<OffboardingRecord, 'offboardingId'>): Promise<number> {
    const count = await this.#table.read<{ deletions?: number }>(
      keys.offboardingCompleted(offboarding.offboardingId),
    );
    return count?.deletions ?? 0;
  }

  /**
   * Points a stream's link at the deletion that replaced a cancelled one, `adopted` when the
   * offboarding did not request it; only while the link names `from` (a repeat changes nothing).
   * `relinkItems`: the same write as a part of the new deletion's tombstone transaction, held to
   * the offboarding still running (a sweep that read it before its cancel takes nothing in).
   */
  async relink(of: OffboardingRecord, stream: string, from: string, to: string, adopted = false) {
    const key = keys.offboardingLink(of.offboardingId, stream);
    return (await this.#table.update(key, relinkChange(from, to, adopted))).ok;
  }

  relinkItems(offboarding: OffboardingRecord, stream: string, from: string, to: string) {
    const { offboardingId, tenant } = offboarding;
    const key = keys.offboardingLink(offboardingId, stream);
    return [
      this.#table.updateItem(key, relinkChange(from, to, false)),
      this.#table.checkItem(keys.offboarding(tenant), offboardingTakesIn(offboardingId)),
    ];
  }

  links(offboarding: Pick<OffboardingRecord, 'offboardingId'>): AsyncGenerator<OffboardingLink> {
    const scope = keys.offboardingLinksOf(offboarding.offboardingId);
    return this.#table.query<OffboardingLink>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':prefix': scope.skPrefix },
      ConsistentRead: true,
    });
  }

  /**
   * Records one fan-out step: the streams after `seen.fanoutAfter` up to `last` are taken in
   * (`last` absent: every stream is). Its condition (nobody moved since `seen`) makes a repeated
   * step a no-op, and its write is the next step's trigger.
   */
  async advance(seen: OffboardingRecord, last: string | undefined): Promise<boolean> {
    const written = await this.#table.update(keys.offboarding(seen.tenant), {
      update: last
        ? 'SET fanoutAfter = :last, fanoutDue = :true, updatedAt = :now'
        : 'SET fannedOut = :true, updatedAt = :now',
      values: { ...(last ? { ':last': last } : {}), ':true': true, ':now': this.#now() },
      condition: {
        expression: `#state = :running AND offboardingId = :id AND fannedOut = :false AND ${
          seen.fanoutAfter ? 'fanoutAfter = :after' : 'attribute_not_exists(fanoutAfter)'
        }`,
        names: { '#state': 'state' },
        values: {
          ':running': 'RUNNING',
          ':id': seen.offboardingId,
          ':false': false,
          ...(seen.fanoutAfter ? { ':after': seen.fanoutAfter } : {}),
        },
      },
    });
    return written.ok;
  }

  /**
   * Writes that its grace window is over, once (its last write was within it): the write the
   * publisher announces as RUNNING, as the API's view at each write's `updatedAt` says.
   */
  async windowEnded(offboarding: OffboardingRecord): Promise<boolean> {
    const running = offboardingMay('complete');
    const written = await this.#table.update(keys.offboarding(offboarding.tenant), {
      update: 'SET updatedAt = :now',
      values: { ':now': this.#now(), ':id': offboarding.offboardingId },
      condition: {
        ...running,
        expression: `(${running.expression}) AND offboardingId = :id AND updatedAt < executeAfter`,
      },
    });
    return written.ok;
  }

  /** RUNNING -> COMPLETED with the sums of its deletions; the tenant's names are free. */
  async complete(
    offboarding: OffboardingRecord,
    totals: { objectsDeleted: number; bytesDeleted: number },
  ) {
    const written = await this.#table.update(keys.offboarding(offboarding.tenant), {
      update:
        'SET #state = :to, objectsDeleted = :objects, bytesDeleted = :bytes, completedAt = :now, updatedAt = :now REMOVE sweepPk, sweepSk',
      values: {
        ':to': OFFBOARDING_TRANSITIONS.complete.to,
        ':objects': totals.objectsDeleted,
        ':bytes': totals.bytesDeleted,
        ':now': this.#now(),
        ':id': offboarding.offboardingId,
      },
      condition: {
        ...offboardingMay('complete'),
        expression: `(${offboardingMay('complete').expression}) AND offboardingId = :id`,
      },
    });
    return written.ok;
  }

  /**
   * RUNNING -> CANCELLED while its grace window lasts; it stays in the sweep index until the
   * sweeper has cancelled every deletion it took in (`cancelDone`).
   */
  async cancel(tenant: string): Promise<OffboardingRecord | undefined> {
    const now = this.#now();
    const written = await this.#table.update<OffboardingRecord>(keys.offboarding(tenant), {
      update: 'SET #state = :to, cancelledAt = :now, updatedAt = :now',
      values: { ':to': OFFBOARDING_TRANSITIONS.cancel.to, ':now': now },
      condition: {
        ...offboardingMay('cancel'),
        expression: `(${offboardingMay('cancel').expression}) AND executeAfter > :now`,
      },
    });
    return written.ok ? written.item : undefined;
  }

  /** A cancelled offboarding whose deletions are all cancelled leaves the sweep index. */
  async settleCancel(offboarding: OffboardingRecord): Promise<void> {
    await this.#table.update(keys.offboarding(offboarding.tenant), {
      update: 'REMOVE sweepPk, sweepSk',
      condition: equals('offboardingId', offboarding.offboardingId),
    });
  }

  /** Offboardings the sweeper still has work on: running, or cancelled and not yet settled. */
  underWay(): AsyncGenerator<OffboardingRecord> {
    return this.#table.query<OffboardingRecord>({
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: 'sweepPk = :offboardings',
      ExpressionAttributeValues: { ':offboardings': RUNNING_OFFBOARDINGS },
    });
  }

  #now() {
    return this.#clock.now().toISOString();
  }
}

const relinkChange = (from: string, to: string, adopted: boolean): Change => ({
  update: `SET deletionId = :to${adopted ? ', adopted = :true' : ' REMOVE adopted'}`,
  values: { ':to': to, ...(adopted ? { ':true': true } : {}) },
  condition: equals('deletionId', from),
});
