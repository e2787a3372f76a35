import type { S3Client } from '@aws-sdk/client-s3';
import { failpoint } from './failpoints.ts';
import type { Finalizer } from './finalizer.ts';
import { fenceOf, type PageMessage, type WorkMessage } from './messages.ts';
import type { ChainRecord, DeletionRecord, PageRecord } from './model.ts';
import { isInside } from './names.ts';
import type { PageDeleter } from './page-deleter.ts';
import { firstPage, type ListedObject } from './pager.ts';
import type { ProgressStore } from './progress.ts';
import { firstVersionPage } from './version-pager.ts';
import type { WorkQueue } from './work-queue.ts';

export interface PageWorkerOptions {
  readonly store: ProgressStore;
  readonly s3: S3Client;
  readonly deleter: PageDeleter;
  readonly queue: WorkQueue;
  readonly finalizer: Finalizer;
  /** Keys listed and deleted per message, at most 1,000. */
  readonly pageSize?: number;
  /** Seconds between marks of progress on the deletion (for the sweeper). @default 60 */
  readonly heartbeatSeconds?: number;
}

export type WorkOutcome =
  | { outcome: 'stale' | 'duplicate' | 'chain-ended' }
  | { outcome: 'deleted'; objects: number; bytes: number; failures: number; retriedKeys: number }
  | { outcome: 'finalize'; result: string };

/** True when the message belongs to the deletion's current, running round and generation. */
const isCurrent = (deletion: DeletionRecord | undefined, message: WorkMessage) =>
  deletion !== undefined &&
  deletion.state === 'RUNNING' &&
  deletion.generation === message.generation &&
  deletion.round === message.round;

/**
 * One message, one page: list up to 1,000 keys after the chain's cursor, record the listing,
 * hand the next page to the queue, delete the page with one DeleteObjects, then count it.
 * Every step is idempotent, so a redelivered, duplicated or reordered message is harmless.
 */
export class PageWorker {
  readonly #store: ProgressStore;
  readonly #s3: S3Client;
  readonly #deleter: PageDeleter;
  readonly #queue: WorkQueue;
  readonly #finalizer: Finalizer;
  readonly #pageSize: number;
  readonly #heartbeatMs: number;

  constructor(options: PageWorkerOptions) {
    this.#store = options.store;
    this.#s3 = options.s3;
    this.#deleter = options.deleter;
    this.#queue = options.queue;
    this.#finalizer = options.finalizer;
    this.#pageSize = options.pageSize ?? 1000;
    this.#heartbeatMs = (options.heartbeatSeconds ?? 60) * 1000;
  }

  async handle(message: WorkMessage): Promise<WorkOutcome> {
    const deletion = await this.#store.getDeletion(message.tenant, message.deletionId);
    if (!deletion || !isCurrent(deletion, message)) return { outcome: 'stale' };
    if (message.type === 'finalize') {
      return { outcome: 'finalize', result: await this.#finalizer.finalize(deletion) };
    }
    return this.#page(deletion, message);
  }

  async #page(deletion: DeletionRecord, message: PageMessage): Promise<WorkOutcome> {
    const chain = await this.#store.getChain(deletion, message.chainId);
    if (!chain) return { outcome: 'stale' };
    assertInside(chain.prefix, deletion.prefix);
    if (chain.lastPage >= message.page) return this.#resume(deletion, chain, message.page);
    if (chain.lastPage !== message.page - 1 || chain.ended) return { outcome: 'stale' };
    await this.#heartbeat(deletion);

    const listing = await this.#list(deletion, chain.prefix, chain.lastKey);
    for (const object of listing.objects) assertInside(object.key, deletion.prefix);
    failpoint('worker.after-list');
    const ended = !listing.truncated;
    const page = pageOf(chain, message.page, listing);
    const listed = await this.#store.recordListing(deletion, chain, message.page, page, ended);
    if (listed.outcome === 'duplicate') {
      const current = await this.#store.getChain(deletion, message.chainId);
      return current ? this.#resume(deletion, current, message.page) : { outcome: 'stale' };
    }
    if (!page) {
      await this.#settleIfDone(deletion, listed.chain);
      return { outcome: 'chain-ended' };
    }
    failpoint('worker.before-next-page');
    // Pipelining: the next page is listed by another worker while this one deletes. Versioned
    // chains list from the start of their prefix, so their next page waits for this deletion.
    const pipelined = !deletion.versioned;
    if (!ended && pipelined) await this.#sendPage(deletion, chain, message.page + 1);
    const result = await this.#deleteAndCount(deletion, page, listing.objects);
    if (!ended && !pipelined && result.outcome === 'deleted') {
      await this.#sendPage(deletion, chain, message.page + 1);
    }
    return result;
  }

  /** Finishes a page that was listed before (a redelivery after a crash, or a duplicate). */
  async #resume(deletion: DeletionRecord, chain: ChainRecord, pageNumber: number) {
    const page = chain.open?.[String(pageNumber)];
    if (!page) {
      // Counted already; if the run that counted it died before settling, settle now.
      await this.#settleIfDone(deletion, chain);
      return { outcome: 'duplicate' } as const;
    }
    const nextPending = chain.lastPage === pageNumber && !chain.ended;
    const pipelined = !deletion.versioned;
    if (nextPending && pipelined) await this.#sendPage(deletion, chain, pageNumber + 1);
    const listing = await this.#list(deletion, chain.prefix, page.startAfter);
    // Only what is left of this page's own range: keys deleted before the crash are gone.
    const own = new Set(page.versionIds ?? []);
    const remaining = listing.objects.filter((object) =>
      page.partial ? own.has(object.versionId ?? '') : object.key <= page.lastKey,
    );
    for (const object of remaining) assertInside(object.key, deletion.prefix);
    const result = await this.#deleteAndCount(deletion, page, remaining);
    if (nextPending && !pipelined && result.outcome === 'deleted') {
      await this.#sendPage(deletion, chain, pageNumber + 1);
    }
    return result;
  }

  /** A chain that has ended with no page open counts towards its round, once; maybe the last. */
  async #settleIfDone(deletion: DeletionRecord, chain: ChainRecord) {
    if (!chain.ended || Object.keys(chain.open ?? {}).length > 0) return;
    if (!chain.settled) await this.#store.settleChain(deletion, chain);
    await this.#finalizer.finalizeIfReady(deletion);
  }

  /** Progress is counted on chains; the deletion's own clock moves only every so often. */
  async #heartbeat(deletion: DeletionRecord) {
    if (Date.now() - Date.parse(deletion.updatedAt) >= this.#heartbeatMs) {
      await this.#store.touch(deletion);
    }
  }

  /** One page after `startAfter`: keys, or in a versioned bucket every version of whole keys. */
  async #list(deletion: DeletionRecord, prefix: string, startAfter: string | undefined) {
    const configuration = { client: this.#s3, pageSize: this.#pageSize };
    const input = { Bucket: deletion.bucket, Prefix: prefix, StartAfter: startAfter };
    if (deletion.versioned) return firstVersionPage(configuration, input);
    const page = await firstPage(configuration, input);
    return {
      objects: page.objects,
      truncated: page.truncated,
      partial: false,
      lastKey: page.lastKey,
    };
  }

  async #deleteAndCount(
    deletion: DeletionRecord,
    page: PageRecord,
    objects: ListedObject[],
  ): Promise<WorkOutcome> {
    const result = await this.#deleter.deletePage(deletion.bucket, objects);
    failpoint('worker.after-delete');
    if (result.failures.length > 0) await this.#store.recordFailures(deletion, result.failures);
    // Counted from the listing that opened the page, so a resumed page counts keys that an
    // earlier attempt deleted, and a duplicate counts nothing.
    const counted = {
      objects: page.count - result.failedObjects,
      bytes: page.bytes - result.failedBytes,
      failed: result.failures.length,
    };
    const completed = await this.#store.completePage(deletion, page, counted);
    if (completed.outcome !== 'recorded') return { outcome: 'duplicate' };
    await this.#settleIfDone(deletion, completed.chain);
    return {
      outcome: 'deleted',
      objects: counted.objects,
      bytes: counted.bytes,
      failures: counted.failed,
      retriedKeys: result.retriedKeys,
    };
  }

  async #sendPage(deletion: DeletionRecord, chain: ChainRecord, page: number) {
    await this.#queue.send([{ ...fenceOf(deletion), type: 'page', chainId: chain.chainId, page }]);
  }
}

function pageOf(
  chain: ChainRecord,
  page: number,
  listing: { objects: ListedObject[]; partial: boolean; lastKey?: string | undefined },
): PageRecord | undefined {
  const { objects } = listing;
  if (objects.length === 0) return undefined;
  // Delete markers are deleted with the page but are not objects of the stream.
  const counted = objects.filter((object) => !object.marker);
  return {
    chainId: chain.chainId,
    round: chain.round,
    page,
    ...(chain.lastKey ? { startAfter: chain.lastKey } : {}),
    lastKey: listing.lastKey ?? objects.at(-1)?.key ?? '',
    count: counted.length,
    bytes: counted.reduce((sum, object) => sum + object.size, 0),
    ...(listing.partial
      ? { partial: true, versionIds: objects.map((object) => object.versionId ?? '') }
      : {}),
  };
}

/** Nothing outside the deletion's own location is ever deleted, whatever a record says. */
function assertInside(key: string, location: string) {
  if (key !== location && !isInside(key, location)) {
    throw new Error(`refusing to touch ${key}: outside the deletion's location ${location}`);
  }
}
