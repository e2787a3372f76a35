import {
  addCounts,
  type Clock,
  chainIdOf,
  countPage,
  isInScope,
  NO_COUNTS,
  type PlanChainRecord,
  type PlanCounts,
  type PlanPageMessage,
  type PlanRecord,
  planPageMessage,
  scopeOf,
  systemClock,
} from '../core/index.ts';
import { childrenOf, firstPage, isBucketVersioned, isRefusal, uploadsUnder } from '../s3/index.ts';
import type { PlanChainLayout, PlanStore } from '../store/index.ts';
import { collect } from './dispatcher.ts';
import type { ObjectStore } from './ports.ts';

export interface PlanSender {
  send(messages: PlanPageMessage[]): Promise<void>;
}

export interface PlannerOptions {
  readonly plans: Pick<
    PlanStore,
    'get' | 'register' | 'start' | 'chains' | 'chain' | 'countPage' | 'complete' | 'fail'
  >;
  /** Read-only use: the planner lists, and never deletes, aborts or writes an object. */
  readonly s3: ObjectStore;
  readonly queue: PlanSender;
  /** Entries per listing page: the deletion's own page size, so pages are counted alike. */
  readonly pageSize: number;
  readonly clock?: Clock;
}

export type PlanPageOutcome = 'counted' | 'ended' | 'duplicate' | 'stale' | 'failed';

/**
 * A plan, run as a deletion runs but counting instead of deleting: `start` lays out one chain
 * per child prefix (and one for the keys directly under the location) and sends each chain's
 * first page; `page` lists one page, counts it once (a conditional write on the chain's page
 * number) and hands the next page on; the last chain to end completes the plan, with the
 * multipart uploads in progress counted. Every step may be repeated: duplicates count nothing.
 * A listing S3 refuses for good (access denied, the bucket gone) ends the plan FAILED with
 * S3's code; anything else is thrown, for the message to come again.
 */
export class Planner {
  readonly #plans: PlannerOptions['plans'];
  readonly #s3: ObjectStore;
  readonly #queue: PlanSender;
  readonly #pageSize: number;
  readonly #clock: Clock;

  constructor(options: PlannerOptions) {
    this.#plans = options.plans;
    this.#s3 = options.s3;
    this.#queue = options.queue;
    this.#pageSize = options.pageSize;
    this.#clock = options.clock ?? systemClock;
  }

  async start(ref: { tenant: string; planId: string }): Promise<'started' | 'stale' | 'failed'> {
    let plan = await this.#plans.get(ref.tenant, ref.planId);
    if (!plan) return 'stale';
    if (plan.state === 'PENDING') {
      const pending = plan;
      const laidOut = await this.#unlessRefused(plan, async () => {
        const versioned = await isBucketVersioned(this.#s3, pending.bucket);
        return { versioned, chains: await this.#layout(pending, versioned) };
      });
      if (laidOut === 'failed') return 'failed';
      const { versioned, chains } = laidOut;
      await this.#plans.register(plan, chains);
      // The chain of direct keys has ended already: only the others are waited for.
      const working = chains.filter((chain) => chain.counts === undefined).length;
      await this.#plans.start(plan, working, versioned, this.#clock.now());
      plan = await this.#plans.get(ref.tenant, ref.planId);
    }
    if (plan?.state !== 'RUNNING') return 'stale';
    if (plan.chainsTotal === 0) {
      await this.finalizeIfReady(plan);
      return 'started';
    }
    const first: PlanPageMessage[] = [];
    for await (const chain of this.#plans.chains(plan)) {
      if (chain.page === 0 && !chain.ended) first.push(planPageMessage(chain, 0));
    }
    await this.#queue.send(first);
    return 'started';
  }

  async page(message: PlanPageMessage): Promise<PlanPageOutcome> {
    const plan = await this.#plans.get(message.tenant, message.planId);
    const chain = await this.#plans.chain(message.planId, message.chainId);
    if (!plan || !chain || plan.state !== 'RUNNING' || message.page > chain.page) return 'stale';
    if (message.page < chain.page) return this.#redelivered(plan, chain, message.page);
    const listed = await this.#unlessRefused(plan, () =>
      firstPage(
        { client: this.#s3, pageSize: this.#pageSize },
        { Bucket: plan.bucket, Prefix: chain.prefix, After: chain.cursor },
        plan.versioned === true,
      ),
    );
    if (listed === 'failed') return 'failed';
    // Only what the deletion may take is counted (a listing by prefix cannot widen it).
    const inside = listed.objects.filter((entry) => isInScope(entry.key, scopeOf(plan)));
    const counted = await this.#plans.countPage(
      chain,
      countPage(inside, plan.versioned === true),
      listed.next,
    );
    if (counted.status !== 'ok') return 'duplicate';
    if (listed.next) {
      await this.#queue.send([planPageMessage(chain, chain.page + 1)]);
      return 'counted';
    }
    await this.finalizeIfReady(plan);
    return 'ended';
  }

  /** Completes the plan once every chain has ended: totals, and the uploads in progress. */
  async finalizeIfReady(ref: Pick<PlanRecord, 'tenant' | 'planId'>): Promise<boolean> {
    const plan = await this.#plans.get(ref.tenant, ref.planId);
    if (plan?.state !== 'RUNNING' || plan.chainsSettled < plan.chainsTotal) return false;
    // Every chain, not only those `chainsTotal` counts: a start that died after registering its
    // chains lays them out again, and a listing changed meanwhile omits one registered before.
    const chains = await collect(this.#plans.chains(plan));
    if (chains.some((chain) => !chain.ended)) return false;
    const uploads = await this.#unlessRefused(plan, async () => {
      let count = 0;
      for await (const page of uploadsUnder(this.#s3, plan.bucket, plan.prefix)) {
        count += page.filter((upload) => isInScope(upload.key, scopeOf(plan))).length;
      }
      return count;
    });
    if (uploads === 'failed') return false;
    const totals = chains.reduce<PlanCounts>(addCounts, NO_COUNTS);
    return (await this.#plans.complete(plan, totals, uploads, this.#clock.now())).status === 'ok';
  }

  /** `listing`'s answer, or the plan FAILED with S3's code when S3 refused it for good. */
  async #unlessRefused<T>(plan: PlanRecord, listing: () => Promise<T>): Promise<T | 'failed'> {
    try {
      return await listing();
    } catch (error) {
      if (!isRefusal(error)) throw error;
      const message = `S3 refused to list s3://${plan.bucket}/${plan.prefix}: ${error.message}`;
      await this.#plans.fail(plan, { code: error.name, message }, this.#clock.now());
      return 'failed';
    }
  }

  /**
   * A page counted before, delivered again: the step after it may have been lost with the
   * worker that counted it, so it is taken again (both steps are idempotent).
   */
  async #redelivered(
    plan: PlanRecord,
    chain: PlanChainRecord,
    page: number,
  ): Promise<PlanPageOutcome> {
    if (page !== chain.page - 1) return 'duplicate';
    if (chain.ended) await this.finalizeIfReady(plan);
    else await this.#queue.send([planPageMessage(chain, chain.page)]);
    return 'duplicate';
  }

  /**
   * One chain per child prefix; the keys directly under the location are counted by the same
   * listing (as a deletion's dispatcher lists it), into a chain that has ended already.
   */
  async #layout(plan: PlanRecord, versioned: boolean) {
    let direct = NO_COUNTS;
    const listed = await childrenOf(this.#s3, plan, versioned, (entries) => {
      // The location's own key (a console "folder") is the deletion's too.
      const inside = entries.filter((entry) => isInScope(entry.key, scopeOf(plan)));
      direct = addCounts(direct, { ...countPage(inside, versioned), pages: 0 });
    });
    const children = listed.prefixes.filter((prefix) => isInScope(prefix, scopeOf(plan)));
    const chains: PlanChainLayout[] = children.map((prefix) => ({
      chainId: chainIdOf(prefix),
      prefix,
    }));
    if (listed.direct) {
      // Their deletion takes a page of its own.
      const counts = { ...direct, pages: Math.ceil(direct.versions / this.#pageSize) || 1 };
      chains.push({ chainId: chainIdOf(plan.prefix), prefix: plan.prefix, counts });
    }
    return chains;
  }
}
