import {
  type ChainLayout,
  type ChainRecord,
  chainIdOf,
  type DeletionRecord,
  type DeletionRef,
  isInScope,
  isOk,
  type PageMessage,
  pageMessage,
  scopeOf,
} from '../core/index.ts';
import { childrenOf, firstPage, isBucketVersioned } from '../s3/index.ts';
import { failpoint } from '../support/index.ts';
import { chainsOver, sampleSize } from './chain-layout.ts';
import type { Finalizer } from './finalizer.ts';
import type { Chains, Deletions, ObjectStore, WorkSender } from './ports.ts';

export interface DispatcherOptions {
  readonly deletions: Deletions<'get' | 'start'>;
  readonly chains: Chains<'begin' | 'register' | 'list'>;
  readonly s3: ObjectStore;
  readonly queue: WorkSender;
  readonly finalizer: Pick<Finalizer, 'finalize'>;
  /**
   * Ask the bucket whether it keeps versions before the first round (one request per
   * deletion). Off for a bucket known to be unversioned: verification still finds versions
   * and starts a versioned round if the bucket turns out to keep them. @default true
   */
  readonly detectVersioning?: boolean;
  /**
   * The workers' page size, by which runs of small child prefixes are sized; a stream
   * deletion whose whole location lists within its sample (`sampleSize`) is one chain, however
   * many child prefixes it has. @default 1000
   */
  readonly pageSize?: number;
}

/** DynamoDB's limit on the items of one transaction: the chains and the deletion. */
const MAX_TRANSACTION_ITEMS = 100;

export type DispatchOutcome = 'stale' | 'dispatched' | 'empty';

/**
 * Plans a round of a deletion: one chain of pages per child prefix (so date partitions
 * delete in parallel), one per run of small child prefixes (lib/pipeline/chain-layout.ts), or
 * one chain over the whole location when it has no children or lists within the sample.
 * Idempotent: a repeat registers nothing new and only starts chains that never started.
 */
export class Dispatcher {
  readonly #deletions: DispatcherOptions['deletions'];
  readonly #chains: DispatcherOptions['chains'];
  readonly #s3: ObjectStore;
  readonly #queue: WorkSender;
  readonly #finalizer: DispatcherOptions['finalizer'];
  readonly #detectVersioning: boolean;
  readonly #pageSize: number;

  constructor(options: DispatcherOptions) {
    this.#deletions = options.deletions;
    this.#chains = options.chains;
    this.#s3 = options.s3;
    this.#queue = options.queue;
    this.#finalizer = options.finalizer;
    this.#detectVersioning = options.detectVersioning ?? true;
    this.#pageSize = options.pageSize ?? 1000;
  }

  async dispatch(ref: DeletionRef): Promise<DispatchOutcome> {
    let deletion = await this.#deletions.get(ref.tenant, ref.deletionId);
    if (!deletion || deletion.round !== ref.round) return 'stale';
    if (deletion.state === 'PENDING') {
      const versioned =
        deletion.versioned === true ||
        (this.#detectVersioning && (await isBucketVersioned(this.#s3, deletion.bucket)));
      const started = await this.#start(deletion, await this.#plan(deletion, versioned), versioned);
      // Started by this call: the round runs the chains it started, which need not be read.
      if (started.length > 0) return this.#send(started.map((chain) => pageMessage(chain, 0)));
      deletion = await this.#deletions.get(ref.tenant, ref.deletionId);
      if (!deletion || deletion.round !== ref.round) return 'stale';
    }
    if (deletion.state !== 'RUNNING') return 'stale';
    if (deletion.chainsTotal === 0) {
      await this.#finalizer.finalize(deletion);
      return 'empty';
    }
    return this.#send(await this.firstPages(deletion));
  }

  /**
   * Creates the round's chains and starts it: the chains it started, none if the round was
   * started already (or has no chains). One transaction when the round has at most 99 chains.
   * Otherwise, or if a chain exists already (a round begun chain by chain and not started),
   * every chain is created on its own, the round's chains are read back, and the round starts
   * with as many as there are: the start is conditional on PENDING in this round, so only one
   * call starts it, whatever chains an earlier one left.
   */
  async #start(deletion: DeletionRecord, layout: ChainLayout[], versioned: boolean) {
    if (layout.length < MAX_TRANSACTION_ITEMS) {
      const begun = await this.#chains.begin(deletion, layout, versioned);
      if (begun.status === 'ok') return begun.item;
      if (begun.status === 'fenced') return [];
    }
    await this.#chains.register(deletion, layout, versioned);
    const registered = await collect(this.#chains.list(deletion));
    const started = await this.#deletions.start(deletion, registered.length, versioned);
    return isOk(started) ? registered.filter(notStarted) : [];
  }

  async #send(firstPages: PageMessage[]): Promise<DispatchOutcome> {
    failpoint('dispatcher.before-enqueue');
    await this.#queue.send(firstPages);
    failpoint('dispatcher.after-enqueue');
    return 'dispatched';
  }

  /** The first page of every chain of the round that has not started yet. */
  async firstPages(deletion: DeletionRef): Promise<PageMessage[]> {
    const messages: PageMessage[] = [];
    for await (const chain of this.#chains.list(deletion)) {
      if (notStarted(chain)) messages.push(pageMessage(chain, 0));
    }
    return messages;
  }

  async #plan(deletion: DeletionRecord, versioned: boolean): Promise<ChainLayout[]> {
    const childrenOfLocation = async () => {
      const listed = await childrenOf(this.#s3, deletion, versioned);
      const prefixes = listed.prefixes.filter((prefix) => isInScope(prefix, scopeOf(deletion)));
      return { prefixes, direct: listed.direct };
    };
    const chainOver = (prefix: string) => ({ chainId: chainIdOf(prefix), prefix });
    // A partition deletion takes its partitions and nothing else, never the keys beside them.
    if (deletion.before) return (await childrenOfLocation()).prefixes.map(chainOver);
    // Chains pay for themselves in parallel pages: a location that lists within the sample is
    // one chain (one page), whatever its child prefixes.
    const sample = await firstPage(
      { client: this.#s3, pageSize: sampleSize(this.#pageSize) },
      { Bucket: deletion.bucket, Prefix: deletion.prefix },
      versioned,
    );
    if (sample.next === undefined) {
      return sample.objects.length > 0 ? [chainOver(deletion.prefix)] : [];
    }
    const children = await childrenOfLocation();
    // Small children are taken in runs of about a page each, judged by the sample.
    if (children.prefixes.length > 1) {
      return chainsOver(deletion.prefix, children.prefixes, sample.objects, this.#pageSize);
    }
    // Keys directly under the location, beside child prefixes, are left to the next round:
    // the verify step finds them, and that round's listing has no children left to split by.
    if (children.prefixes.length > 0) return children.prefixes.map(chainOver);
    return children.direct ? [chainOver(deletion.prefix)] : [];
  }
}

const notStarted = (chain: ChainRecord) => chain.lastPage === -1 && !chain.ended;

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
