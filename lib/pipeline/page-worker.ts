import {
  type ChainRecord,
  type Clock,
  type Cursor,
  compareKeys,
  isInRange,
  type ListedObject,
  type PageMessage,
  type PageRecord,
  pageMessage,
  SlowDownError,
  type WorkMessage,
} from '../core/index.ts';
import { firstPage, type ListingPage, type PageResult } from '../s3/index.ts';
import { failpoint } from '../support/index.ts';
import type { KeyBudget } from './budget.ts';
import type { DeletionFence } from './fence.ts';
import type { Finalizer } from './finalizer.ts';
import { ChainPacer, nextSlot, paceRise } from './pace.ts';
import { countOf, leftOfPage } from './page-counts.ts';
import { assertInside, listChainPage, listPageAgain, pageOf } from './page-records.ts';
import type { Chains, Deleter, Deletions, Failures, ObjectStore, WorkSender } from './ports.ts';

export interface PageWorkerOptions {
  readonly chains: Chains<
    'get' | 'recordListing' | 'completePage' | 'slowDown' | 'takeSlot' | 'split' | 'markIndivisible'
  >;
  readonly deletions: Deletions<'get'>;
  readonly failures: Failures<'record'>;
  readonly fence: Pick<DeletionFence, 'isRunning'>;
  readonly s3: ObjectStore;
  readonly deleter: Deleter;
  readonly queue: WorkSender;
  readonly finalizer: Pick<Finalizer, 'finalize' | 'settle'>;
  /** Entries listed and deleted per message, at most 1,000. @default 1000 */
  readonly pageSize?: number;
  /** The bucket's key budget (`LETHE_MAX_KEYS_PER_SECOND`). @default none */
  readonly budget?: Pick<KeyBudget, 'take' | 'giveBack'>;
  /** The longest a page waits for its chain's pace in the queue (ChainPacer's). @default 900 */
  readonly longestDelaySeconds?: number;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
}

export type WorkOutcome =
  | { outcome: 'stale' | 'duplicate' | 'chain-ended' }
  | { outcome: 'deferred'; seconds: number }
  | { outcome: 'slowed'; seconds: number; pace: number }
  | { outcome: 'deleted'; objects: number; bytes: number; failures: number; retriedKeys: number }
  | { outcome: 'finalize'; result: string };

/**
 * One message, one page: list up to 1,000 entries after the chain's cursor, record the
 * listing, hand the next page to the queue, delete the page with one DeleteObjects, then count
 * it. Every step is idempotent, so a redelivered, duplicated or reordered message is harmless.
 * A page S3 refuses with SlowDown slows its chain down and comes back later.
 */
export class PageWorker {
  readonly #chains: PageWorkerOptions['chains'];
  readonly #deletions: PageWorkerOptions['deletions'];
  readonly #failures: PageWorkerOptions['failures'];
  readonly #fence: PageWorkerOptions['fence'];
  readonly #s3: ObjectStore;
  readonly #deleter: Deleter;
  readonly #queue: WorkSender;
  readonly #finalizer: PageWorkerOptions['finalizer'];
  readonly #pageSize: number;
  readonly #budget: PageWorkerOptions['budget'];
  readonly #pacer: ChainPacer;

  constructor(options: PageWorkerOptions) {
    this.#chains = options.chains;
    this.#deletions = options.deletions;
    this.#failures = options.failures;
    this.#fence = options.fence;
    this.#s3 = options.s3;
    this.#deleter = options.deleter;
    this.#queue = options.queue;
    this.#finalizer = options.finalizer;
    this.#pageSize = options.pageSize ?? 1000;
    this.#budget = options.budget;
    this.#pacer = new ChainPacer({
      chains: options.chains,
      queue: options.queue,
      pageSize: this.#pageSize,
      longestDelaySeconds: options.longestDelaySeconds,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  }

  async handle(message: WorkMessage): Promise<WorkOutcome> {
    if (message.type === 'finalize') {
      const deletion = await this.#deletions.get(message.tenant, message.deletionId);
      const current =
        deletion?.state === 'RUNNING' &&
        deletion.generation === message.generation &&
        deletion.round === message.round;
      if (!deletion || !current) return { outcome: 'stale' };
      return { outcome: 'finalize', result: await this.#finalizer.finalize(deletion) };
    }
    return this.#page(message);
  }

  async #page(message: PageMessage): Promise<WorkOutcome> {
    // The chain carries its fence, and a Stalled verdict's stop: the page reads one item.
    const chain = await this.#chains.get(message, message.chainId);
    if (!chain || chain.generation !== message.generation) return { outcome: 'stale' };
    if (chain.stopped || !(await this.#fence.isRunning(chain))) return { outcome: 'stale' };
    assertInside(chain.prefix, chain);
    if (chain.lastPage >= message.page) return this.#resume(chain, message);
    if (chain.lastPage !== message.page - 1 || chain.ended) return { outcome: 'stale' };
    // A chain S3 has slowed down lists no sooner than 1.5 s before its slot.
    const gate = await this.#pacer.gate(chain, message);
    if (gate.go === 'later') return { outcome: 'deferred', seconds: gate.seconds };
    // The bucket's key budget, taken before listing: a chain never lists ahead of it.
    const later = await this.#roomFor(chain, message);
    if (later > 0) return { outcome: 'deferred', seconds: later };

    const listing = await this.#list(chain, chain.cursor);
    await this.#budget?.giveBack(chain.bucket, listing.objects.length);
    for (const object of listing.objects) assertInside(object.key, chain);
    failpoint('worker.after-list');
    // A run of child prefixes holding more than a page hands half the rest to a new chain.
    const lastKey = listing.objects.at(-1)?.key;
    if (listing.next && lastKey !== undefined && chain.range && !chain.range.indivisible) {
      const split = await this.#split(chain, message.page, lastKey);
      if (split === 'moved') return this.#page(message);
      if (split === 'fenced') return { outcome: 'stale' };
      // Started now: its range follows this page's, and this run may lose the listing below.
      if (split) await this.#queue.send([pageMessage(split, 0)]);
    }
    const page = pageOf(message.page, chain.cursor, listing.objects);
    const now = this.#pacer.now();
    const nextAt = nextSlot(chain, listing.objects.length, now);
    const listed = await this.#chains.recordListing(chain, message.page, page, listing.next, now);
    if (listed.status !== 'ok') {
      const current = listed.current ?? (await this.#chains.get(message, message.chainId));
      return current ? this.#resume(current, message) : { outcome: 'stale' };
    }
    failpoint('worker.before-next-page');
    // Pipelining: the next page is listed by another worker while this one deletes.
    if (listing.next) await this.#sendPage(chain, message.page + 1, nextAt);
    if (!page) {
      await this.#finalizer.settle(listed.item);
      return { outcome: 'chain-ended' };
    }
    return this.#deleteInTurn(listed.item, page, listing.objects);
  }

  /**
   * Deletes a chain's page that was listed and recorded before any worker saw it: the first
   * page of a round's first chain, which the dispatcher listed to lay the round out (so it is
   * never listed twice). The steps after a worker's own listing: the bucket's key budget (a
   * page it cannot take yet goes to the queue, to be listed again in its time), the chain's
   * turn, one DeleteObjects, the count, the settle.
   */
  async deleteListed(
    chain: ChainRecord,
    page: PageRecord,
    objects: ListedObject[],
  ): Promise<WorkOutcome> {
    for (const object of objects) assertInside(object.key, chain);
    const later = await this.#roomFor(chain, { ...pageMessage(chain, page.page), handedOn: true });
    if (later > 0) return { outcome: 'deferred', seconds: later };
    await this.#budget?.giveBack(chain.bucket, objects.length);
    return this.#deleteInTurn(chain, page, objects);
  }

  /** Finishes a page that was listed before (a redelivery after a crash, or a duplicate). */
  async #resume(chain: ChainRecord, message: PageMessage): Promise<WorkOutcome> {
    const pageNumber = message.page;
    // The run that listed it (open, or empty but more to list) may have died before handing on.
    if (chain.lastPage === pageNumber && !chain.ended && !message.handedOn) {
      await this.#sendPage(chain, pageNumber + 1, chain.nextAt);
    }
    const page = chain.open?.[String(pageNumber)];
    if (!page) {
      // Counted already; if the run that counted it died before settling, settle now.
      await this.#finalizer.settle(chain);
      return { outcome: 'duplicate' };
    }
    // It lists again no sooner than 1.5 s before its chain's slot; the next page is handed on
    // by now, so a message sent back for the slot says so.
    const gate = await this.#pacer.gate(chain, { ...message, handedOn: true });
    if (gate.go === 'later') return { outcome: 'deferred', seconds: gate.seconds };
    // Every attempt at a page's delete takes room in the key budget: a page the budget sent
    // back (the dispatcher's first) as much as one refused or cut short before.
    const later = await this.#roomFor(chain, { ...message, handedOn: true });
    if (later > 0) return { outcome: 'deferred', seconds: later };
    const listed = await listPageAgain(this.#s3, chain, page, this.#pageSize);
    // What is left of this page's own range: entries deleted before the crash are gone.
    const left = await leftOfPage(this.#s3, chain, page, listed);
    await this.#budget?.giveBack(chain.bucket, left.remaining.length);
    for (const object of left.remaining) assertInside(object.key, chain);
    return this.#deleteInTurn(chain, left.page, left.remaining);
  }

  /**
   * A paced chain's page deletes in its turn: at its slot, taken half a slot before it comes,
   * so the time between two deletes of a chain is its pace's and not the latency of the
   * listing or of the slot's write. The slot is as long as the keys it sends (markers too).
   */
  async #deleteInTurn(
    chain: ChainRecord,
    page: PageRecord,
    objects: ListedObject[],
  ): Promise<WorkOutcome> {
    const turn = await this.#pacer.turn(chain, page, objects.length);
    if (turn.go === 'later') return { outcome: 'deferred', seconds: turn.seconds };
    if (turn.go === 'gone') return { outcome: 'stale' };
    return this.#deleteAndCount(turn.chain, page, objects, turn.chain.cutAt);
  }

  /** 0 when the bucket's key budget has room for a page; else the seconds `message` waits. */
  async #roomFor(chain: ChainRecord, message: PageMessage): Promise<number> {
    const later = (await this.#budget?.take(chain.bucket)) ?? 0;
    if (later > 0) await this.#queue.send([message], later);
    return later;
  }

  async #list(chain: ChainRecord, after: Cursor | undefined): Promise<ListingPage> {
    return listChainPage(this.#s3, chain, after, this.#pageSize);
  }

  /**
   * Splits the rest of a range chain's range after `lastKey` at the middle one of the child
   * prefixes that follow: the new chain, nothing when no child prefix is left to split at (the
   * chain is marked so), `moved` when the chain changed, `fenced` when its round is over.
   */
  async #split(
    chain: ChainRecord,
    pageNumber: number,
    lastKey: string,
  ): Promise<ChainRecord | undefined | 'moved' | 'fenced'> {
    const range = chain.range ?? {};
    const listed = await firstPage(
      { client: this.#s3 },
      { Bucket: chain.bucket, Prefix: chain.prefix, Delimiter: '/', After: { key: lastKey } },
      chain.versioned,
    );
    // The child holding lastKey comes back too (rolled up): only the ones after it count.
    const after = listed.prefixes.filter(
      (prefix) =>
        !lastKey.startsWith(prefix) && compareKeys(prefix, lastKey) > 0 && isInRange(prefix, range),
    );
    const from = after[Math.floor(after.length / 2)];
    if (from === undefined) {
      // A run of empty truncated pages says nothing of the prefixes after it: split later.
      const unseen = listed.next && listed.objects.length === 0 && listed.prefixes.length === 0;
      if (!unseen) await this.#chains.markIndivisible(chain);
      return undefined;
    }
    const split = await this.#chains.split(chain, pageNumber, from);
    return split.status === 'ok' ? split.item : split.status === 'fenced' ? 'fenced' : 'moved';
  }

  /** `seenCutAt`: the chain's last cut in pace when this page was let go. */
  async #deleteAndCount(
    chain: ChainRecord,
    page: PageRecord,
    objects: ListedObject[],
    seenCutAt: number | undefined,
  ): Promise<WorkOutcome> {
    let result: PageResult;
    const sentAt = this.#pacer.now();
    try {
      result = await this.#deleter.deletePage(chain.bucket, objects);
    } catch (error) {
      if (error instanceof SlowDownError) return this.#pacer.refused(chain, page, seenCutAt);
      throw error;
    }
    failpoint('worker.after-delete');
    if (result.failures.length > 0) await this.#failures.record(chain, result.failures);
    const counted = await countOf(this.#s3, chain, page, result);
    const step = chain.pace === undefined ? undefined : { rise: paceRise(chain), sentAt };
    const completed = await this.#chains.completePage(chain, page, counted, step);
    if (completed.status !== 'ok') return { outcome: 'duplicate' };
    await this.#finalizer.settle(completed.item);
    return {
      outcome: 'deleted',
      objects: counted.objects,
      bytes: counted.bytes,
      failures: counted.failed,
      retriedKeys: result.retriedKeys,
    };
  }

  /** Hands on a page; a paced chain's next page is delayed to its slot (whole seconds). */
  async #sendPage(chain: ChainRecord, page: number, nextAt?: number) {
    const delay = this.#pacer.delayTo(nextAt);
    const messages = [pageMessage(chain, page)];
    await (delay > 0 ? this.#queue.send(messages, delay) : this.#queue.send(messages));
  }
}
