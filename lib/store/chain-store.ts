import {
  type ChainLayout,
  type ChainRecord,
  type Clock,
  type Cursor,
  chainIdOf,
  type DeletionRecord,
  type DeletionRef,
  type DeletionTotals,
  duplicate,
  fenced,
  type ListedFirstPage,
  newChain,
  newChains,
  type Outcome,
  ok,
  type PageRecord,
  systemClock,
  totalsOf,
  withFirstPage,
} from '../core/index.ts';
import {
  chainChanges,
  chainHasEnded,
  closesChain,
  completed,
  notStopped,
  type PaceStep,
  type Pacing,
  type PageCounts,
} from './chain-changes.ts';
import { all, atRound, deletionMay, isAbsent } from './conditions.ts';
import type { DeletionStore } from './deletion-store.ts';
import { keys } from './layout.ts';
import type { Table } from './table.ts';

export interface ChainStoreOptions {
  readonly table: Table;
  /** The deletion item's owner, for its part in settling a chain. */
  readonly deletions: Pick<DeletionStore, 'roundChains'>;
  /** @default the system clock */
  readonly clock?: Clock;
}

/**
 * The chain item: a chain's cursor, open pages and counts, its pace, and its deletion's
 * fence. Every page of a chain is two conditional writes here (list, then count), on the chain
 * alone but for the last: a chain settles once, in a transaction with its deletion.
 */
export class ChainStore {
  readonly #table: Table;
  readonly #deletions: ChainStoreOptions['deletions'];
  readonly #clock: Clock;

  constructor(options: ChainStoreOptions) {
    this.#table = options.table;
    this.#deletions = options.deletions;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Creates the chains of a round, 98 a transaction (one write of the deletion item), each with
   * a check that its deletion is PENDING in that round (a stale image adds no chain to a round
   * under way): `fenced` once it is not. Chains that already exist keep their progress.
   */
  async register(
    deletion: DeletionRecord,
    chains: ChainLayout[],
    versioned: boolean,
  ): Promise<Outcome> {
    const pending = this.#table.checkItem(
      keys.deletion(deletion.tenant, deletion.deletionId),
      all(deletionMay('start'), atRound(deletion.round)),
    );
    const put = (chain: ChainRecord) =>
      this.#table.putItem({ ...this.#key(chain), ...chain }, isAbsent);
    const records = newChains(deletion, chains, versioned, this.#clock.now().getTime());
    let batch = records.splice(0, 98);
    while (batch.length > 0) {
      const result = await this.#table.transact([pending, ...batch.map(put)]);
      if (!result.ok && result.failed.includes(0)) return fenced();
      const absent = result.ok ? [] : batch.filter((_, at) => !result.failed.includes(at + 1));
      batch = absent.length > 0 ? absent : records.splice(0, 98);
    }
    return ok(undefined);
  }

  /**
   * Creates the chains of a round and starts it, in one transaction (so at most 99 chains): the
   * chains, `fenced` if the deletion is not PENDING in that round, or `duplicate` if one of the
   * chains exists already or the round is marked as registering (`register` makes its chains,
   * and the round starts after them). `firstPage`: the first chain's page 0, listed already;
   * the chain is created with it open.
   */
  async begin(
    deletion: DeletionRecord,
    chains: ChainLayout[],
    versioned: boolean,
    firstPage?: ListedFirstPage,
  ): Promise<Outcome<ChainRecord[]>> {
    const now = this.#clock.now().getTime();
    const records = newChains(deletion, chains, versioned, now).map((chain, index) =>
      index === 0 && firstPage ? withFirstPage(chain, firstPage, now) : chain,
    );
    // The deletion first, so that the item its condition saw is the one returned.
    const result = await this.#table.transact([
      this.#deletions.roundChains(deletion, { chainsTotal: records.length, versioned }),
      ...records.map((chain) => this.#table.putItem({ ...this.#key(chain), ...chain }, isAbsent)),
    ]);
    if (result.ok) return ok(records);
    if (!result.failed.includes(0)) return duplicate();
    // PENDING in the round: refused by the registering mark alone. Else the round moved on.
    const seen = result.old as DeletionRecord | undefined;
    return seen?.state === 'PENDING' && seen.round === deletion.round ? duplicate() : fenced();
  }

  /**
   * Hands the rest of a chain's range from `from` on to a new chain, before the chain lists
   * page `pageNumber`'s successor: the chain keeps the keys below `from`, the new chain (not
   * started) takes the others, and the deletion counts one more chain to settle, in one
   * transaction. Refused when the chain moved on or its range changed since it was read.
   */
  async split(chain: ChainRecord, pageNumber: number, from: string): Promise<Outcome<ChainRecord>> {
    const range = chain.range ?? {};
    const below = range.below !== undefined ? { below: range.below } : {};
    const layout = { chainId: chainIdOf(from), prefix: chain.prefix, range: { from, ...below } };
    const added = newChain(chain, layout);
    const result = await this.#table.transact([
      this.#table.updateItem(this.#key(chain), {
        update: 'SET #range.below = :from',
        names: { '#range': 'range' },
        values: {
          ':from': from,
          ':listed': pageNumber - 1,
          ':false': false,
          ...(range.below !== undefined ? { ':below': range.below } : {}),
        },
        condition: {
          expression: `lastPage = :listed AND ended = :false AND ${notStopped} AND ${
            range.below === undefined
              ? 'attribute_not_exists(#range.below)'
              : '#range.below = :below'
          }`,
        },
      }),
      this.#table.putItem({ ...this.#key(added), ...added }, isAbsent),
      this.#deletions.roundChains(chain, 'chainAdded'),
    ]);
    if (result.ok) return ok(added);
    return result.failed.includes(2) ? fenced() : duplicate();
  }

  /** Stops a chain for good (a Stalled verdict): the chain as it now is, `fenced` if absent. */
  async stop(chain: ChainRecord): Promise<Outcome<ChainRecord>> {
    const written = await this.#table.update<ChainRecord>(this.#key(chain), chainChanges.stop);
    return written.ok ? ok(written.item) : fenced();
  }

  /** Marks that no child prefix lies in the rest of the chain's range: it is not split again. */
  async markIndivisible(chain: ChainRecord): Promise<void> {
    await this.#table.update(this.#key(chain), {
      update: 'SET #range.indivisible = :true',
      names: { '#range': 'range' },
      values: { ':true': true },
      condition: { expression: 'attribute_exists(#range)' },
    });
  }

  async get(ref: DeletionRef, chainId: string): Promise<ChainRecord | undefined> {
    return this.#table.read<ChainRecord>(keys.chain(ref.deletionId, ref.round, chainId));
  }

  /** The chains of the deletion's current round. */
  list(ref: DeletionRef): AsyncGenerator<ChainRecord> {
    const scope = keys.chainsOf(ref.deletionId, ref.round);
    return this.#table.query<ChainRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':prefix': scope.skPrefix },
      ConsistentRead: true,
    });
  }

  /**
   * Records that page `pageNumber` was listed (or, without a page, that the chain listed
   * empty): the cursor moves to `next` and the page joins the open pages. One conditional
   * write on the chain, so only one listing of a page number can win. The first listing
   * stamps the chain's start (`now`).
   */
  async recordListing(
    chain: ChainRecord,
    pageNumber: number,
    page: PageRecord | undefined,
    next: Cursor | undefined,
    now = Date.now(),
  ): Promise<Outcome<ChainRecord>> {
    const change = chainChanges.listing(pageNumber, page, next, now);
    const written = await this.#table.update<ChainRecord>(this.#key(chain), change);
    return written.ok ? ok(written.item) : duplicate(written.old);
  }

  /**
   * S3 refused one of the chain's pages with SlowDown: the chain's pace from now on (see
   * lib/pipeline/pace), unless another refusal cut it since `seenCutAt` (the chain's last cut
   * when the page was let go). Then nothing changes and the chain as it is comes back.
   */
  async slowDown(
    chain: ChainRecord,
    pacing: Pacing,
    seenCutAt: number | undefined,
  ): Promise<{ ok: true } | { ok: false; current: ChainRecord | undefined }> {
    const change = chainChanges.slowDown(pacing, seenCutAt);
    const written = await this.#table.update<ChainRecord>(this.#key(chain), change);
    return written.ok ? { ok: true } : { ok: false, current: written.old };
  }

  /**
   * Takes a paced chain's next slot for a page, moving it to `next`: the chain as taken, or
   * undefined if another page took it first (the chain's slot is no longer the one this page
   * read).
   */
  async takeSlot(chain: ChainRecord, next: number): Promise<ChainRecord | undefined> {
    const written = await this.#table.update<ChainRecord>(this.#key(chain), {
      update: 'SET nextAt = :next',
      values: { ':next': Math.ceil(next) },
      condition:
        chain.nextAt === undefined
          ? { expression: 'attribute_not_exists(nextAt)' }
          : { expression: 'nextAt = :seen', values: { ':seen': chain.nextAt } },
    });
    return written.ok ? written.item : undefined;
  }

  /**
   * Counts an open page's deletion on its chain and closes it, exactly once: one conditional
   * write on the chain item. The last page of a chain that has ended (as read) settles the
   * chain too, in one transaction with its deletion (as `settle` does); if that is refused,
   * the page is counted on its own and the chain is left to `settle`.
   */
  async completePage(
    chain: ChainRecord,
    page: PageRecord,
    counts: PageCounts,
    step?: PaceStep,
  ): Promise<Outcome<ChainRecord>> {
    if (closesChain(chain, page)) {
      const result = await this.#table.transact([
        this.#table.updateItem(
          this.#key(chain),
          chainChanges.completion(chain, page, counts, step, true),
        ),
        this.#deletions.roundChains(chain, 'settled'),
      ]);
      if (result.ok) return ok(completed(chain, page, counts, step));
    }
    const change = chainChanges.completion(chain, page, counts, step, false);
    const written = await this.#table.update<ChainRecord>(this.#key(chain), change);
    return written.ok ? ok(written.item) : duplicate(written.old);
  }

  /**
   * Counts a chain that has ended with no page open towards its round, once: `duplicate` if
   * it was counted already, `fenced` if its deletion is no longer running that round.
   */
  async settle(chain: ChainRecord): Promise<Outcome> {
    const result = await this.#table.transact([
      this.#table.updateItem(this.#key(chain), {
        update: 'SET settled = :true',
        values: { ':true': true, ':false': false },
        condition: chainHasEnded,
      }),
      this.#deletions.roundChains(chain, 'settled'),
    ]);
    if (result.ok) return ok(undefined);
    return result.failed.includes(0) ? duplicate() : fenced();
  }

  /** Every chain of every round of a deletion, read at once. */
  async all(deletion: Pick<DeletionRecord, 'deletionId'>): Promise<ChainRecord[]> {
    const scope = keys.chainsOf(deletion.deletionId);
    const chains: ChainRecord[] = [];
    for await (const chain of this.#table.query<ChainRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :chains)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':chains': scope.skPrefix },
      ConsistentRead: true,
    })) {
      chains.push(chain);
    }
    return chains;
  }

  /** What a deletion deleted so far: every chain of every round. */
  async totals(deletion: Pick<DeletionRecord, 'deletionId' | 'round'>): Promise<DeletionTotals> {
    return totalsOf(await this.all(deletion), deletion.round);
  }

  #key(chain: Pick<ChainRecord, 'deletionId' | 'round' | 'chainId'>) {
    return keys.chain(chain.deletionId, chain.round, chain.chainId);
  }
}
