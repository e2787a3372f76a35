import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { failpoint } from './failpoints.ts';
import type { Finalizer } from './finalizer.ts';
import { fenceOf, type PageMessage } from './messages.ts';
import type { ChainRecord, DeletionRecord } from './model.ts';
import { isInside } from './names.ts';
import { paginatePages } from './pager.ts';
import type { ProgressStore } from './progress.ts';
import { isBucketVersioned, versionedChildren } from './version-pager.ts';
import type { WorkQueue } from './work-queue.ts';

export interface DispatcherOptions {
  readonly store: ProgressStore;
  readonly s3: S3Client;
  readonly queue: WorkQueue;
  readonly finalizer: Finalizer;
  /**
   * Ask the bucket whether it keeps versions before the first round (one request per
   * deletion). Off for a bucket known to be unversioned: verification still finds versions
   * and starts a versioned round if the bucket turns out to keep them. @default true
   */
  readonly detectVersioning?: boolean;
}

export interface DeletionRef {
  tenant: string;
  deletionId: string;
  round: number;
}

export type DispatchOutcome = 'stale' | 'dispatched' | 'empty';

/** A chain's id is a digest of its prefix: the same listing always yields the same chains. */
export const chainIdOf = (prefix: string) =>
  createHash('sha256').update(prefix).digest('hex').slice(0, 20);

/**
 * Plans a round of a deletion: one chain of pages per child prefix (so date partitions
 * delete in parallel), or one chain over the whole location when it has no children.
 * Idempotent: a repeat registers nothing new and only starts chains that never started.
 */
export class Dispatcher {
  readonly #store: ProgressStore;
  readonly #s3: S3Client;
  readonly #queue: WorkQueue;
  readonly #finalizer: Finalizer;
  readonly #detectVersioning: boolean;

  constructor(options: DispatcherOptions) {
    this.#detectVersioning = options.detectVersioning ?? true;
    this.#store = options.store;
    this.#s3 = options.s3;
    this.#queue = options.queue;
    this.#finalizer = options.finalizer;
  }

  async dispatch(ref: DeletionRef): Promise<DispatchOutcome> {
    let deletion = await this.#store.getDeletion(ref.tenant, ref.deletionId);
    if (!deletion || deletion.round !== ref.round) return 'stale';
    if (deletion.state === 'PENDING') {
      const versioned =
        deletion.versioned === true ||
        (this.#detectVersioning && (await isBucketVersioned(this.#s3, deletion.bucket)));
      await this.#store.registerChains(deletion, await this.#plan(deletion, versioned));
      const registered = await collect(this.#store.chains(deletion));
      await this.#store.startRound(deletion, registered.length, versioned);
      deletion = await this.#store.getDeletion(ref.tenant, ref.deletionId);
      if (!deletion || deletion.round !== ref.round) return 'stale';
    }
    if (deletion.state !== 'RUNNING') return 'stale';
    if (deletion.chainsTotal === 0) {
      await this.#finalizer.finalize(deletion);
      return 'empty';
    }
    failpoint('dispatcher.before-enqueue');
    await this.startChains(deletion, (chain) => chain.lastPage === -1 && !chain.ended);
    failpoint('dispatcher.after-enqueue');
    return 'dispatched';
  }

  /** Sends the next page of every chain that `select` picks. */
  async startChains(deletion: DeletionRecord, select: (chain: ChainRecord) => boolean) {
    const messages: PageMessage[] = [];
    for await (const chain of this.#store.chains(deletion)) {
      if (!select(chain)) continue;
      messages.push({
        ...fenceOf(deletion),
        type: 'page',
        chainId: chain.chainId,
        page: chain.lastPage + 1,
      });
    }
    await this.#queue.send(messages);
    return messages.length;
  }

  async #plan(deletion: DeletionRecord, versioned: boolean) {
    const children: string[] = [];
    let hasDirectKeys = false;
    if (versioned) {
      const listed = await versionedChildren(this.#s3, deletion.bucket, deletion.prefix);
      children.push(...listed.prefixes.filter((prefix) => isInside(prefix, deletion.prefix)));
      hasDirectKeys = listed.direct;
    } else {
      for await (const page of paginatePages(
        { client: this.#s3 },
        { Bucket: deletion.bucket, Prefix: deletion.prefix, Delimiter: '/' },
      )) {
        children.push(...page.prefixes.filter((prefix) => isInside(prefix, deletion.prefix)));
        hasDirectKeys ||= page.objects.length > 0;
      }
    }
    // Keys directly under the location, beside child prefixes, are left to the next round:
    // the verify step finds them, and that round's listing has no children left to split by.
    const prefixes = children.length > 0 ? children : hasDirectKeys ? [deletion.prefix] : [];
    return prefixes.map((prefix) => ({ chainId: chainIdOf(prefix), prefix }));
  }
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
