import {
  addCounts,
  type Clock,
  type Cursor,
  duplicate,
  fenced,
  NO_COUNTS,
  type Outcome,
  ok,
  PLAN_TRANSITIONS,
  type PlanChainRecord,
  type PlanCounts,
  type PlanRecord,
  systemClock,
} from '../core/index.ts';
import { all, atGeneration, equals, isAbsent, planMay, streamMay } from './conditions.ts';
import { keys, OPEN_PLANS, SWEEP_INDEX, TTL_ATTRIBUTE } from './layout.ts';
import type { Table } from './table.ts';

/** A chain as the planner lays it out: `counts` when it was counted already (it has ended). */
export interface PlanChainLayout {
  chainId: string;
  prefix: string;
  counts?: PlanCounts;
}

/** Plans are previews: they expire a week after they are requested. */
const PLAN_TTL_SECONDS = 7 * 86_400;

/** What the sweeper saw of a plan it looked at: pages counted, and looks since with none more. */
export interface PlanLook {
  pagesSeen: number;
  stalls: number;
}

/**
 * Plans and their chains: the only code that writes them. A page is counted by one
 * conditional write on its chain (its page number), so a duplicate message counts nothing; a
 * chain that ends is settled towards its plan in the same transaction. A plan not yet ended is
 * in the sweep index (`OPEN_PLANS`), by when it started or the sweeper last looked at it.
 */
export class PlanStore {
  readonly #table: Table;
  readonly #clock: Clock;

  constructor(options: { readonly table: Table; readonly clock?: Clock }) {
    this.#table = options.table;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Writes a new plan, PENDING, if the stream is still ACTIVE at the plan's generation: the
   * stream item is checked, never written. `fenced` when it no longer is.
   */
  async request(plan: PlanRecord): Promise<Outcome<PlanRecord>> {
    const result = await this.#table.transact([
      this.#table.checkItem(
        keys.stream(plan.tenant, plan.stream),
        all(streamMay('plan'), atGeneration(plan.generation)),
      ),
      this.#table.putItem(
        {
          ...keys.plan(plan.planId),
          ...plan,
          ...this.#ttl(plan),
          sweepPk: OPEN_PLANS,
          sweepSk: plan.requestedAt,
        },
        isAbsent,
      ),
    ]);
    return result.ok ? ok(plan) : fenced();
  }

  async get(tenant: string, planId: string): Promise<PlanRecord | undefined> {
    const plan = await this.#table.read<PlanRecord & { [TTL_ATTRIBUTE]?: number }>(
      keys.plan(planId),
    );
    // Another tenant's plan is not this tenant's to see. An expired one is gone, though TTL
    // removes its item only within days and reads return it until then.
    if (plan?.tenant !== tenant || this.#hasExpired(plan[TTL_ATTRIBUTE])) return undefined;
    return plan;
  }

  /** Creates the plan's chains; chains that exist already keep their progress. */
  async register(plan: PlanRecord, chains: PlanChainLayout[]): Promise<void> {
    const put = ({ chainId, prefix, counts }: PlanChainLayout) => {
      const record: PlanChainRecord = {
        planId: plan.planId,
        tenant: plan.tenant,
        chainId,
        prefix,
        page: counts ? 1 : 0,
        ended: counts !== undefined,
        ...(counts ?? NO_COUNTS),
      };
      return this.#table.put(
        keys.planChain(plan.planId, chainId),
        record,
        isAbsent,
        this.#ttl(plan),
      );
    };
    for (let start = 0; start < chains.length; start += 16) {
      await Promise.all(chains.slice(start, start + 16).map(put));
    }
  }

  /** PENDING -> RUNNING with its chains counted; `duplicate` when it runs already. */
  async start(
    plan: PlanRecord,
    chainsTotal: number,
    versioned: boolean,
    now: Date,
  ): Promise<Outcome> {
    const written = await this.#table.update(keys.plan(plan.planId), {
      update:
        'SET #state = :to, chainsTotal = :total, versioned = :versioned, updatedAt = :now, sweepSk = :now',
      values: {
        ':to': PLAN_TRANSITIONS.start.to,
        ':total': chainsTotal,
        ':versioned': versioned,
        ':now': now.toISOString(),
      },
      condition: planMay('start'),
    });
    return written.ok ? ok(undefined) : duplicate();
  }

  chains(plan: Pick<PlanRecord, 'planId'>): AsyncGenerator<PlanChainRecord> {
    const scope = keys.planChainsOf(plan.planId);
    return this.#table.query<PlanChainRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':prefix': scope.skPrefix },
      ConsistentRead: true,
    });
  }

  async chain(planId: string, chainId: string): Promise<PlanChainRecord | undefined> {
    return this.#table.read<PlanChainRecord>(keys.planChain(planId, chainId));
  }

  /**
   * Counts page `chain.page` and moves the chain on to `next`; without `next` the chain has
   * ended and is settled towards its plan in the same transaction. `duplicate` when that page
   * was counted already.
   */
  async countPage(
    chain: PlanChainRecord,
    counts: PlanCounts,
    next: Cursor | undefined,
  ): Promise<Outcome> {
    const change = {
      update: `SET #page = :next, #ended = :hasEnded${next ? ', #cursor = :cursor' : ''} ADD #objects :objects, #bytes :bytes, #versions :versions, #markers :markers, #pages :pages`,
      names: {
        '#objects': 'objects',
        '#bytes': 'bytes',
        '#versions': 'versions',
        '#markers': 'deleteMarkers',
        '#pages': 'pages',
        ...(next ? { '#cursor': 'cursor' } : {}),
      },
      values: {
        ':next': chain.page + 1,
        ':hasEnded': next === undefined,
        ...(next ? { ':cursor': next } : {}),
        ':objects': counts.objects,
        ':bytes': counts.bytes,
        ':versions': counts.versions,
        ':markers': counts.deleteMarkers,
        ':pages': counts.pages,
      },
      // Binds #page, #ended (and :page, :ended) for the update too.
      condition: all(equals('page', chain.page), equals('ended', false)),
    };
    const key = keys.planChain(chain.planId, chain.chainId);
    if (next) {
      const written = await this.#table.update(key, change);
      return written.ok ? ok(undefined) : duplicate();
    }
    const result = await this.#table.transact([
      this.#table.updateItem(key, change),
      this.#table.updateItem(keys.plan(chain.planId), {
        update: 'ADD chainsSettled :one',
        values: { ':one': 1 },
        condition: planMay('complete'),
      }),
    ]);
    if (result.ok) return ok(undefined);
    return result.failed.includes(0) ? duplicate() : fenced();
  }

  /** Every chain's counts, summed. */
  async totals(plan: Pick<PlanRecord, 'planId'>): Promise<PlanCounts> {
    let totals = NO_COUNTS;
    for await (const chain of this.chains(plan)) totals = addCounts(totals, chain);
    return totals;
  }

  /** RUNNING -> COMPLETED with its totals and the uploads in progress it found. */
  async complete(
    plan: PlanRecord,
    totals: PlanCounts,
    multipartUploads: number,
    now: Date,
  ): Promise<Outcome> {
    const written = await this.#table.update(keys.plan(plan.planId), {
      update:
        'SET #state = :to, #objects = :objects, #bytes = :bytes, #versions = :versions, #markers = :markers, #pages = :pages, multipartUploads = :uploads, completedAt = :now, updatedAt = :now REMOVE sweepPk, sweepSk',
      names: {
        '#objects': 'objects',
        '#bytes': 'bytes',
        '#versions': 'versions',
        '#markers': 'deleteMarkers',
        '#pages': 'pages',
      },
      values: {
        ':to': PLAN_TRANSITIONS.complete.to,
        ':objects': totals.objects,
        ':bytes': totals.bytes,
        ':versions': totals.versions,
        ':markers': totals.deleteMarkers,
        ':pages': totals.pages,
        ':uploads': multipartUploads,
        ':now': now.toISOString(),
      },
      condition: planMay('complete'),
    });
    return written.ok ? ok(undefined) : duplicate();
  }

  async fail(
    plan: PlanRecord,
    reason: { code: string; message: string },
    now: Date,
  ): Promise<Outcome> {
    const written = await this.#table.update(keys.plan(plan.planId), {
      update:
        'SET #state = :to, reason = :reason, completedAt = :now, updatedAt = :now REMOVE sweepPk, sweepSk',
      values: { ':to': PLAN_TRANSITIONS.fail.to, ':reason': reason, ':now': now.toISOString() },
      condition: planMay('fail'),
    });
    return written.ok ? ok(undefined) : duplicate();
  }

  /** Plans not yet ended that were started, or last looked at, before `cutoff`. */
  open(cutoff: Date): AsyncGenerator<PlanRecord> {
    return this.#table.query<PlanRecord>({
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: 'sweepPk = :plans AND sweepSk < :cutoff',
      ExpressionAttributeValues: { ':plans': OPEN_PLANS, ':cutoff': cutoff.toISOString() },
    });
  }

  /**
   * Records the sweeper's look at a plan it found in the index as `seen`: won only if the plan
   * has not been written since (so one sweeper of several takes it), and only while it is open.
   * A PENDING plan's write is also a new record on the table's stream, which starts it again.
   */
  async claim(seen: PlanRecord, look: PlanLook, now: Date): Promise<Outcome<PlanRecord>> {
    const written = await this.#table.update<PlanRecord>(keys.plan(seen.planId), {
      update: 'SET pagesSeen = :pagesSeen, stalls = :stalls, updatedAt = :now, sweepSk = :now',
      names: { '#state': 'state' },
      values: {
        ':pagesSeen': look.pagesSeen,
        ':stalls': look.stalls,
        ':now': now.toISOString(),
        ':seen': seen.state,
        ':updatedAt': seen.updatedAt,
      },
      condition: all(planMay('fail'), {
        expression: '#state = :seen AND updatedAt = :updatedAt',
      }),
    });
    return written.ok ? ok(written.item) : duplicate();
  }

  #hasExpired(expiresAt: number | undefined) {
    return expiresAt !== undefined && expiresAt * 1000 <= this.#clock.now().getTime();
  }

  #ttl(plan: Pick<PlanRecord, 'requestedAt'>) {
    return { [TTL_ATTRIBUTE]: Math.floor(Date.parse(plan.requestedAt) / 1000) + PLAN_TTL_SECONDS };
  }
}
