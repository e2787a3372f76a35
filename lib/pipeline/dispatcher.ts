import { randomUUID } from 'node:crypto';
import {
  type ChainLayout,
  type ChainRecord,
  chainIdOf,
  type DeletionRecord,
  type DeletionRef,
  isInScope,
  isOk,
  type ListedObject,
  type PageMessage,
  pageMessage,
  scopeOf,
} from '../core/index.ts';
import { childrenOf, firstPage, isBucketVersioned } from '../s3/index.ts';
import { failpoint } from '../support/index.ts';
import { chainsOver } from './chain-layout.ts';
import type { Finalizer } from './finalizer.ts';
import { firstPageOf } from './page-records.ts';
import type { PageWorker, WorkOutcome } from './page-worker.ts';
import type { Chains, Deletions, ObjectStore, WorkSender } from './ports.ts';

export interface DispatcherOptions {
  readonly deletions: Deletions<'get' | 'start' | 'markRegistering'>;
  readonly chains: Chains<'begin' | 'register' | 'list'>;
  readonly s3: ObjectStore;
  readonly queue: WorkSender;
  readonly finalizer: Pick<Finalizer, 'finalize'>;
  /**
   * Deletes the first chain's first page, which the dispatcher listed to lay the round out and
   * recorded with the chain: a page listed once, not twice, and a location that lists in one
   * page is deleted without a message. Without it that page is left to a worker, which lists
   * it again.
   */
  readonly pages?: Pick<PageWorker, 'deleteListed'>;
  /**
   * Ask the bucket whether it keeps versions before the first round (one request per
   * deletion). Off for a bucket known to be unversioned: verification still finds versions
   * and starts a versioned round if the bucket turns out to keep them. @default true
   */
  readonly detectVersioning?: boolean;
  /**
   * The workers' page size: of the first page, by which runs of small child prefixes are
   * sized; a stream deletion whose whole location lists in one page is one chain, however many
   * child prefixes it has. @default 1000
   */
  readonly pageSize?: number;
}

/** DynamoDB's limit on the items of one transaction: the chains and the deletion. */
const MAX_TRANSACTION_ITEMS = 100;

/** What a dispatch did; `firstPage`: how the page it listed and deleted itself went. */
export type DispatchOutcome =
  | { outcome: 'stale' | 'empty' }
  | { outcome: 'dispatched'; firstPage?: WorkOutcome };

/** A round's layout, and the first chain's page 0 when the layout's listing was that page. */
interface RoundPlan {
  layout: ChainLayout[];
  firstPage?: ReturnType<typeof firstPageOf>;
}

/**
 * Plans a round of a deletion: one chain of pages per child prefix (so date partitions
 * delete in parallel), one per run of small child prefixes (lib/pipeline/chain-layout.ts), or
 * one chain over the whole location when it has no children or lists in one page. The page
 * listed to judge the location is the first chain's first page: it is recorded with the chain
 * and deleted here, so a small deletion ends without a message to the workers.
 * Idempotent: a repeat registers nothing new and only starts chains that never started.
 */
export class Dispatcher {
  readonly #deletions: DispatcherOptions['deletions'];
  readonly #chains: DispatcherOptions['chains'];
  readonly #s3: ObjectStore;
  readonly #queue: WorkSender;
  readonly #finalizer: DispatcherOptions['finalizer'];
  readonly #pages: DispatcherOptions['pages'];
  readonly #detectVersioning: boolean;
  readonly #pageSize: number;

  constructor(options: DispatcherOptions) {
    this.#deletions = options.deletions;
    this.#chains = options.chains;
    this.#s3 = options.s3;
    this.#queue = options.queue;
    this.#finalizer = options.finalizer;
    this.#pages = options.pages;
    this.#detectVersioning = options.detectVersioning ?? true;
    this.#pageSize = options.pageSize ?? 1000;
  }

  /**
   * `seen`: the deletion as its table stream record showed it. Taken as it is when it is
   * PENDING in the round: a stale image is fenced by the round's conditional start, after which
   * the deletion is read. Otherwise, or without it, the deletion is read first.
   */
  async dispatch(ref: DeletionRef, seen?: DeletionRecord): Promise<DispatchOutcome> {
    const pending =
      seen?.state === 'PENDING' &&
      seen.round === ref.round &&
      seen.tenant === ref.tenant &&
      seen.deletionId === ref.deletionId;
    let deletion = pending ? seen : await this.#deletions.get(ref.tenant, ref.deletionId);
    if (!deletion || deletion.round !== ref.round) return { outcome: 'stale' };
    if (deletion.state === 'PENDING') {
      const versioned =
        deletion.versioned === true ||
        (this.#detectVersioning && (await isBucketVersioned(this.#s3, deletion.bucket)));
      const plan = await this.#plan(deletion, versioned);
      const started = await this.#start(deletion, plan, versioned);
      // Started by this call: the round runs the chains it started, which need not be read.
      if (started.length > 0) return this.#run(started, plan.firstPage?.objects);
      deletion = await this.#deletions.get(ref.tenant, ref.deletionId);
      if (!deletion || deletion.round !== ref.round) return { outcome: 'stale' };
    }
    if (deletion.state !== 'RUNNING') return { outcome: 'stale' };
    if (deletion.chainsTotal === 0) {
      await this.#finalizer.finalize(deletion);
      return { outcome: 'empty' };
    }
    await this.#send(await this.firstPages(deletion));
    return { outcome: 'dispatched' };
  }

  /**
   * Sends the first page of every chain this call started. The first chain, when it was
   * created with the page the plan listed open (`objects`: that page's entries), has its next
   * page handed on instead, as a worker would, and the listed page is deleted here; without a
   * page deleter, it goes to a worker, which lists it again.
   */
  async #run(started: ChainRecord[], objects: ListedObject[] | undefined) {
    const [first] = started;
    const listed = objects && first?.open?.['0'];
    const pages = listed && this.#pages;
    const messages = started.flatMap((chain): PageMessage[] => {
      if (chain !== first || !listed) return [pageMessage(chain, 0)];
      const next = chain.ended ? [] : [pageMessage(chain, 1)];
      return pages ? next : [...next, { ...pageMessage(chain, 0), handedOn: true }];
    });
    if (messages.length > 0) await this.#send(messages);
    if (!(pages && first && listed && objects)) return { outcome: 'dispatched' } as const;
    const firstPage = await pages.deleteListed(first, listed, objects);
    return { outcome: 'dispatched', firstPage } as const;
  }

  /**
   * Creates the round's chains and starts it: the chains it started, none if the round was
   * started already (or has no chains). One transaction when the round has at most 99 chains.
   * Otherwise, or once an earlier call began the round chain by chain, the round is marked so
   * (no transaction begins it from then on, and no other call marks it while this one holds
   * it), every chain is created on its own, and the round starts with the chains there are:
   * the start is conditional on PENDING in this round and on the mark being this call's. Only
   * the transaction creates the first chain with its page open.
   *
   * Chains an earlier call made stand as they are, and this call's layout is not added to
   * them: the location may have changed since, and two layouts could overlap and count a key
   * twice. Keys they do not cover (the call died before making them all) are the next round's.
   */
  async #start(deletion: DeletionRecord, plan: RoundPlan, versioned: boolean) {
    const { layout, firstPage: listed } = plan;
    if (layout.length < MAX_TRANSACTION_ITEMS && deletion.registeredRound !== deletion.round) {
      const opened = listed && { page: listed.page, ...(listed.next ? { next: listed.next } : {}) };
      const begun = await this.#chains.begin(deletion, layout, versioned, opened);
      if (begun.status === 'ok') return begun.item;
      if (begun.status === 'fenced') return [];
    }
    // Chain by chain, the first page is not recorded: its chain lists it again. Held by this
    // call until it starts the round: another call at once (the sweeper's, and the stream
    // record its claim writes) makes and starts nothing, so none starts with a part of them.
    const token = randomUUID();
    if (!isOk(await this.#deletions.markRegistering(deletion, token))) return [];
    let registered = await collect(this.#chains.list(deletion));
    if (registered.length === 0) {
      if (!isOk(await this.#chains.register(deletion, layout, versioned))) return [];
      registered = await collect(this.#chains.list(deletion));
    }
    const started = await this.#deletions.start(deletion, registered.length, versioned, token);
    return isOk(started) ? registered.filter(notStarted) : [];
  }

  async #send(messages: PageMessage[]) {
    failpoint('dispatcher.before-enqueue');
    await this.#queue.send(messages);
    failpoint('dispatcher.after-enqueue');
  }

  /**
   * The first page of every chain of the round that has not started yet, and a first page
   * that was listed to start the round and is still open (the call that listed it stopped
   * before deleting it): the worker that takes it lists it again and hands on the next page,
   * unless a worker has listed that already (the page was handed on before the delete).
   */
  async firstPages(deletion: DeletionRef): Promise<PageMessage[]> {
    const messages: PageMessage[] = [];
    for await (const chain of this.#chains.list(deletion)) {
      if (notStarted(chain)) messages.push(pageMessage(chain, 0));
      else if (chain.open?.['0']) {
        const handedOn = chain.lastPage > 0 || chain.ended;
        messages.push({ ...pageMessage(chain, 0), ...(handedOn ? { handedOn } : {}) });
      }
    }
    return messages;
  }

  async #plan(deletion: DeletionRecord, versioned: boolean): Promise<RoundPlan> {
    const childrenOfLocation = async () => {
      const listed = await childrenOf(this.#s3, deletion, versioned);
      const prefixes = listed.prefixes.filter((prefix) => isInScope(prefix, scopeOf(deletion)));
      return { prefixes, direct: listed.direct };
    };
    const chainOver = (prefix: string) => ({ chainId: chainIdOf(prefix), prefix });
    // A partition deletion takes its partitions and nothing else, never the keys beside them.
    if (deletion.before) return { layout: (await childrenOfLocation()).prefixes.map(chainOver) };
    // The location's first page, flat: it judges the location, and it is the first chain's.
    const first = await firstPage(
      { client: this.#s3, pageSize: this.#pageSize },
      { Bucket: deletion.bucket, Prefix: deletion.prefix },
      versioned,
    );
    const laidOut = (layout: ChainLayout[]): RoundPlan => {
      const opened = layout[0] && firstPageOf(layout[0], first);
      return { layout, ...(opened ? { firstPage: opened } : {}) };
    };
    // Chains pay for themselves in parallel pages: a location that lists in one page is one
    // chain (that page), whatever its child prefixes.
    if (first.next === undefined) {
      return laidOut(first.objects.length > 0 ? [chainOver(deletion.prefix)] : []);
    }
    const children = await childrenOfLocation();
    // Small children are taken in runs of about a page each, judged by the first page.
    if (children.prefixes.length > 1) {
      return laidOut(chainsOver(deletion.prefix, children.prefixes, first.objects, this.#pageSize));
    }
    // Keys directly under the location, beside child prefixes, are left to the next round:
    // the verify step finds them, and that round's listing has no children left to split by.
    if (children.prefixes.length > 0) return laidOut(children.prefixes.map(chainOver));
    return laidOut(children.direct ? [chainOver(deletion.prefix)] : []);
  }
}

const notStarted = (chain: ChainRecord) => chain.lastPage === -1 && !chain.ended;

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
