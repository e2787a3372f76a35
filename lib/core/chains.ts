import type { ChainLayout, Cursor } from './ranges.ts';
import type { ChainRecord, DeletionRecord, PageRecord } from './records.ts';

/** Chain records as they are created: from a round's layout, or split off a running chain. */

/** What every chain of a deletion's round shares: its deletion's fence and location. */
export type ChainBase = Pick<
  ChainRecord,
  | 'tenant'
  | 'deletionId'
  | 'round'
  | 'stream'
  | 'generation'
  | 'bucket'
  | 'location'
  | 'versioned'
  | 'before'
>;

/** A chain not started yet, over `layout`. */
export function newChain(base: ChainBase, { chainId, prefix, range }: ChainLayout): ChainRecord {
  return {
    tenant: base.tenant,
    deletionId: base.deletionId,
    round: base.round,
    stream: base.stream,
    generation: base.generation,
    bucket: base.bucket,
    location: base.location,
    chainId,
    prefix,
    ...(range ? { range } : {}),
    versioned: base.versioned,
    ...(base.before ? { before: base.before } : {}),
    lastPage: -1,
    ended: false,
    open: {},
    objectsDeleted: 0,
    bytesDeleted: 0,
    failedObjects: 0,
    pagesDone: 0,
    settled: false,
  };
}

/** The chains of a deletion's round, as they are created at `registeredAt` (epoch ms). */
export function newChains(
  deletion: DeletionRecord,
  layouts: ChainLayout[],
  versioned: boolean,
  registeredAt: number,
): ChainRecord[] {
  const base: ChainBase = {
    tenant: deletion.tenant,
    deletionId: deletion.deletionId,
    round: deletion.round,
    stream: deletion.stream,
    generation: deletion.generation,
    bucket: deletion.bucket,
    location: deletion.prefix,
    versioned,
    ...(deletion.before ? { before: deletion.before } : {}),
  };
  return layouts.map((layout) => ({ ...newChain(base, layout), registeredAt }));
}

/**
 * A chain's first page, listed before the chain was created: the dispatcher lists the first
 * page of a location to lay its round out, and that page is the first chain's page 0. `next`
 * is where the chain's next page starts; absent, the chain ends with this page.
 */
export interface ListedFirstPage {
  page: PageRecord;
  next?: Cursor;
}

/** A new chain as it stands once its first page is listed (as a worker's listing leaves it). */
export function withFirstPage(
  chain: ChainRecord,
  { page, next }: ListedFirstPage,
  now: number,
): ChainRecord {
  return {
    ...chain,
    lastPage: page.page,
    ended: next === undefined,
    ...(next ? { cursor: next } : {}),
    open: { [String(page.page)]: { ...page, listedAt: now } },
    startedAt: now,
  };
}
