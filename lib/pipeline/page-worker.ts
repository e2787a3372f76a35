import {
  type ChainRecord,
  type Cursor,
  isInScope,
  type ListedObject,
  type PageMessage,
  type PageRecord,
  pageMessage,
  type WorkMessage,
} from '../core/index.ts';
import { firstPage, type ListingPage } from '../s3/index.ts';
import { failpoint } from '../support/index.ts';
import type { KeyBudget } from './budget.ts';
import type { DeletionFence } from './fence.ts';
import type { Finalizer } from './finalizer.ts';
import type { Chains, Deleter, Deletions, Failures, ObjectStore, WorkSender } from './ports.ts';

export interface PageWorkerOptions {
  readonly chains: Chains<'get' | 'recordListing' | 'completePage'>;
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
}

export type WorkOutcome =
  | { outcome: 'stale' | 'duplicate' | 'chain-ended' }
  | { outcome: 'deferred'; seconds: number }
  | { outcome: 'deleted'; objects: number; bytes: number; failures: number; retriedKeys: number }
  | { outcome: 'finalize'; result: string };

/**
 * One message, one page: list up to 1,000 entries after the chain's cursor, record the
 * listing, hand the next page to the queue, delete the page with one DeleteObjects, then count
 * it. Every step is idempotent, so a redelivered, duplicated or reordered message is harmless.
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
    // The chain carries its deletion's fence: the page reads one item.
    const chain = await this.#chains.get(message, message.chainId);
    if (!chain || chain.generation !== message.generation) return { outcome: 'stale' };
    if (!(await this.#fence.isRunning(chain))) return { outcome: 'stale' };
    assertInside(chain.prefix, chain);
    if (chain.lastPage >= message.page) return this.#resume(chain, message.page);
    if (chain.lastPage !== message.page - 1 || chain.ended) return { outcome: 'stale' };
    // The bucket's key budget, taken before listing: a chain never lists ahead of it.
    const later = (await this.#budget?.take(chain.bucket)) ?? 0;
    if (later > 0) {
      await this.#queue.send([message], later);
      return { outcome: 'deferred', seconds: later };
    }

    const listing = await this.#list(chain, chain.cursor);
    await this.#budget?.giveBack(chain.bucket, listing.objects.length);
    for (const object of listing.objects) assertInside(object.key, chain);
    failpoint('worker.after-list');
    const page = pageOf(message.page, chain.cursor, listing.objects);
    const listed = await this.#chains.recordListing(chain, message.page, page, listing.next);
    if (listed.status !== 'ok') {
      const current = listed.current ?? (await this.#chains.get(message, message.chainId));
      return current ? this.#resume(current, message.page) : { outcome: 'stale' };
    }
    failpoint('worker.before-next-page');
    // Pipelining: the next page is listed by another worker while this one deletes.
    if (listing.next) await this.#sendPage(chain, message.page + 1);
    if (!page) {
      await this.#finalizer.settle(listed.item);
      return { outcome: 'chain-ended' };
    }
    return this.#deleteAndCount(listed.item, page, listing.objects);
  }

  /** Finishes a page that was listed before (a redelivery after a crash, or a duplicate). */
  async #resume(chain: ChainRecord, pageNumber: number): Promise<WorkOutcome> {
    const page = chain.open?.[String(pageNumber)];
    if (!page) {
      // Counted already; if the run that counted it died before settling, settle now.
      await this.#finalizer.settle(chain);
      return { outcome: 'duplicate' };
    }
    // The run that listed it may have died before handing on the next page.
    if (chain.lastPage === pageNumber && !chain.ended) {
      await this.#sendPage(chain, pageNumber + 1);
    }
    const listing = await this.#list(chain, page.after);
    // Only what is left of this page's own range: entries deleted before the crash are gone.
    const remaining = listing.objects.filter((object) => isInPage(object, page));
    for (const object of remaining) assertInside(object.key, chain);
    return this.#deleteAndCount(chain, page, remaining);
  }

  async #list(chain: ChainRecord, after: Cursor | undefined): Promise<ListingPage> {
    return firstPage(
      { client: this.#s3, pageSize: this.#pageSize },
      { Bucket: chain.bucket, Prefix: chain.prefix, After: after },
      chain.versioned,
    );
  }

  async #deleteAndCount(
    chain: ChainRecord,
    page: PageRecord,
    objects: ListedObject[],
  ): Promise<WorkOutcome> {
    const result = await this.#deleter.deletePage(chain.bucket, objects);
    failpoint('worker.after-delete');
    if (result.failures.length > 0) await this.#failures.record(chain, result.failures);
    // Counted from the listing that opened the page, so a resumed page counts entries that an
    // earlier attempt deleted, and a duplicate counts nothing. A key that only got a delete
    // marker was not deleted: its versions are counted by the versioned round that follows.
    const counted = {
      objects: page.count - result.failedObjects - result.markersLaid,
      bytes: page.bytes - result.failedBytes - result.markersLaidBytes,
      failed: result.failures.length,
    };
    const completed = await this.#chains.completePage(chain, page, counted);
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

  async #sendPage(chain: ChainRecord, page: number) {
    await this.#queue.send([pageMessage(chain, page)]);
  }
}

/** The record of a listed page: its range and what it holds (delete markers are not objects). */
function pageOf(
  number: number,
  after: Cursor | undefined,
  objects: ListedObject[],
): PageRecord | undefined {
  const last = objects.at(-1);
  if (!last) return undefined;
  const counted = objects.filter((object) => !object.marker);
  const versioned = last.versionId !== undefined;
  return {
    page: number,
    ...(after ? { after } : {}),
    lastKey: last.key,
    ...(versioned
      ? {
          lastKeyVersions: objects
            .filter((object) => object.key === last.key)
            .map((object) => object.versionId ?? 'null'),
        }
      : {}),
    count: counted.length,
    bytes: counted.reduce((sum, object) => sum + object.size, 0),
  };
}

/** True when a listed entry lies in a page's range (for its last key: one of its versions). */
function isInPage(object: ListedObject, page: PageRecord) {
  if (object.key < page.lastKey) return true;
  if (object.key > page.lastKey) return false;
  return (
    page.lastKeyVersions === undefined || page.lastKeyVersions.includes(object.versionId ?? 'null')
  );
}

/**
 * Nothing outside the deletion's own location is ever deleted, whatever a record says; for a
 * partition deletion, nothing outside the partitions before its cutoff.
 */
function assertInside(key: string, chain: Pick<ChainRecord, 'location' | 'before'>) {
  const { location, before } = chain;
  // A chain's prefix may be the location itself (a stream deletion with no child prefixes).
  if (key === location && before === undefined) return;
  if (!isInScope(key, { location, ...(before ? { before } : {}) })) {
    const partitions = before ? ` (its partitions before ${before})` : '';
    throw new Error(
      `refusing to touch ${key}: outside the deletion's location ${location}${partitions}`,
    );
  }
}
