import type { S3Client } from '@aws-sdk/client-s3';
import {
  type ChainLayout,
  type ChainRecord,
  type Cursor,
  compareKeys,
  cutToRange,
  isInRange,
  isInScope,
  type ListedFirstPage,
  type ListedObject,
  type PageRecord,
  startOf,
} from '../core/index.ts';
import { firstPage, type ListingPage, type PageResult, paginateVersionPages } from '../s3/index.ts';
import type { PageCounts } from '../store/index.ts';
import type { Chains } from './ports.ts';

/** A chain's next page after `after` (its range's start before the first), cut to its range. */
export async function listChainPage(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range' | 'versioned'>,
  after: Cursor | undefined,
  pageSize: number,
): Promise<ListingPage> {
  const listed = await firstPage(
    { client, pageSize },
    { Bucket: chain.bucket, Prefix: chain.prefix, After: after ?? startOf(chain.range) },
    chain.versioned,
  );
  return { ...cutToRange(listed, chain.range), prefixes: listed.prefixes };
}

/**
 * A page listed again (a resumed or closed page), from where it starts to its last entry. Keys
 * written after the page was listed and inside its range (a PUT slow to land) can fill a
 * listing of the page's own size and push the page's last keys out of it; those would then be
 * counted without being deleted. So it lists on until it reaches the page's last entry.
 */
export async function listPageAgain(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range' | 'versioned'>,
  page: PageRecord,
  pageSize: number,
): Promise<ListedObject[]> {
  const objects: ListedObject[] = [];
  let after = page.after;
  for (;;) {
    const listing = await listChainPage(client, chain, after, pageSize);
    objects.push(...listing.objects);
    const last = listing.objects.at(-1);
    if (!listing.next || !last || reachesEnd(last, page)) return objects;
    after = listing.next;
  }
}

/** The entry is the page's last (for a versioned page: its last key's last version) or past it. */
function reachesEnd(entry: ListedObject, page: PageRecord): boolean {
  const order = compareKeys(entry.key, page.lastKey);
  if (order !== 0) return order > 0;
  const versions = page.lastKeyVersions;
  return !versions || !isInPage(entry, page) || (entry.versionId ?? 'null') === versions.at(-1);
}

/**
 * Counts and closes a page that was listed and never counted, without deleting anything: what
 * of it is gone was deleted by the attempt that died before counting it (a worker stopped
 * between its delete and its count until its deletion stalled). Closed, the page counts in the
 * deletion's receipt, and a retry's new round, which lists only what is left, counts the rest.
 * A worker that counts the page first wins: the close is then a duplicate.
 */
export async function closeOpenPage(
  client: S3Client,
  chains: Chains<'completePage'>,
  chain: ChainRecord,
  page: PageRecord,
): Promise<void> {
  const listed = await listPageAgain(client, chain, page, 1000);
  const left = await leftOfPage(client, chain, page, listed);
  const remaining = left.remaining.filter((object) => !object.marker);
  // More of the page left than it held cannot be: never less than nothing.
  await chains.completePage(chain, page, {
    objects: Math.max(0, left.page.count - remaining.length),
    bytes: Math.max(0, left.page.bytes - remaining.reduce((sum, object) => sum + object.size, 0)),
    failed: 0,
  });
}

/** The record of a listed page: its range and what it holds (delete markers are not objects). */
export function pageOf(
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

/**
 * The part of a location's first page (listed from the location's start) that is a chain's
 * page 0: its entries in the chain's prefix and range, which are the chain's first entries
 * when the chain's keys start the location's (the first chain of a layout). The chain goes on
 * past the page only if the listing does and nothing after the chain's keys was listed. None
 * when the page holds none of the chain's keys.
 */
export function firstPageOf(
  chain: ChainLayout,
  listing: { objects: ListedObject[]; next?: Cursor },
): (ListedFirstPage & { objects: ListedObject[] }) | undefined {
  const inChain = (key: string) =>
    key.startsWith(chain.prefix) && isInRange(key, chain.range ?? {});
  const objects = listing.objects.filter((object) => inChain(object.key));
  const page = pageOf(0, undefined, objects);
  if (!page) return undefined;
  const past = listing.objects.some(
    (object) => compareKeys(object.key, page.lastKey) > 0 && !inChain(object.key),
  );
  return { page, objects, ...(listing.next && !past ? { next: listing.next } : {}) };
}

/** True when a listed entry lies in a page's range (for its last key: one of its versions). */
export function isInPage(object: ListedObject, page: PageRecord) {
  // In S3's order (UTF-8 bytes), as the page was listed.
  const order = compareKeys(object.key, page.lastKey);
  if (order < 0) return true;
  if (order > 0) return false;
  return (
    page.lastKeyVersions === undefined || page.lastKeyVersions.includes(object.versionId ?? 'null')
  );
}

/**
 * Nothing outside the deletion's own location is ever deleted, whatever a record says; for a
 * partition deletion, nothing outside the partitions before its cutoff.
 */
export function assertInside(key: string, chain: Pick<ChainRecord, 'location' | 'before'>) {
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

/**
 * S3's clock (LastModified, to its second) against the worker's that stamped `listedAt`: well
 * past any skew, since a page's own entry taken for a late one would be counted twice.
 */
const LATE_CLOCK_MS = 5_000;

/**
 * An entry written into a page's range after the page was listed (an ingest admitted before the
 * tombstone, or before a partition's midnight, still in flight then): never the page's, so
 * neither deleted nor counted with it. The next round, which finds it, counts it.
 */
const isLate = (object: ListedObject, page: PageRecord) =>
  object.modified !== undefined &&
  page.listedAt !== undefined &&
  object.modified > page.listedAt + LATE_CLOCK_MS;

/**
 * What is left to delete of a page listed again (`listed`: from where the page starts), and the
 * page's record as this attempt counts it: less what an earlier attempt only hid behind delete
 * markers, when entries of a plain page are gone. Entries written after the listing are not
 * the page's.
 */
export async function leftOfPage(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range' | 'versioned'>,
  page: PageRecord,
  listed: ListedObject[],
): Promise<{ page: PageRecord; remaining: ListedObject[] }> {
  const remaining = listed.filter((object) => isInPage(object, page) && !isLate(object, page));
  if (chain.versioned || remaining.length >= page.count) return { page, remaining };
  const hidden = await hiddenByMarkers(client, chain, page);
  const counted = { count: page.count - hidden.objects, bytes: page.bytes - hidden.bytes };
  return { page: { ...page, ...counted }, remaining };
}

/** A marker LastModified (to S3's second) this close before a page's listing may follow it. */
const MARKER_CLOCK_MS = 1_000;

/**
 * What of a plain page's count an earlier attempt's delete did not delete but hid behind a
 * delete marker (the bucket turned versioned after the page was listed): the page's keys whose
 * current version is a marker laid since the page was listed, over a version, and that
 * version's bytes. Such a key was not deleted; the versioned round that follows deletes and
 * counts its versions. A marker from before the listing hid its key from it: never counted.
 */
async function hiddenByMarkers(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range'>,
  page: PageRecord,
): Promise<{ objects: number; bytes: number }> {
  const since = (page.listedAt ?? 0) - MARKER_CLOCK_MS;
  const over = [...(await versionsOfPage(client, chain, page)).values()].filter(
    (key) => key.markedAt !== undefined && key.markedAt >= since && key.kept !== undefined,
  );
  return {
    objects: over.length,
    bytes: over.reduce((sum, key) => sum + (key.kept ?? 0), 0),
  };
}

/**
 * What a page's delete counts, from the listing that opened the page: a resumed page counts
 * entries an earlier attempt deleted, and a duplicate counts nothing (completePage counts a
 * page once). A key S3 answered with a delete marker (a plain page in a bucket that keeps
 * versions) was deleted only if no version is left under the marker: with versioning Enabled
 * the marker hides the version, which the versioned round that follows counts; Suspended, the
 * marker replaced the null version, whose data is gone. The page's listing saw each such key
 * current, so a marker current on it now was laid since (by this delete, or a duplicate's).
 * Its versions are read only when a marker was laid.
 */
export async function countOf(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range'>,
  page: PageRecord,
  sent: ListedObject[],
  result: PageResult,
): Promise<PageCounts> {
  let kept: ListedObject[] = [];
  if (result.markersLaid > 0) {
    const refused = new Set(result.failures.map((failure) => failure.key));
    const versions = await versionsOfPage(client, chain, page);
    kept = sent.filter((object) => {
      const key = versions.get(object.key);
      return !refused.has(object.key) && key?.markedAt !== undefined && key.kept !== undefined;
    });
  }
  return {
    objects: page.count - result.failedObjects - kept.length,
    bytes: page.bytes - result.failedBytes - kept.reduce((sum, object) => sum + object.size, 0),
    failed: result.failures.length,
  };
}

interface KeyVersions {
  /** When its current version is a delete marker: when that was laid (S3's clock). */
  markedAt?: number;
  /** The size of its newest version that is not a marker, when one is left. */
  kept?: number;
}

/** The page's keys as their versions show them, read from where the page starts to its last key. */
async function versionsOfPage(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range'>,
  page: PageRecord,
): Promise<Map<string, KeyVersions>> {
  const keys = new Map<string, KeyVersions>();
  const input = {
    Bucket: chain.bucket,
    Prefix: chain.prefix,
    After: page.after ?? startOf(chain.range),
  };
  listing: for await (const listed of paginateVersionPages({ client }, input)) {
    for (const entry of listed.objects) {
      if (!isInPage(entry, page)) break listing;
      // A range's listing starts just before it (at `from` less its last character): keys that
      // sort between are the chain before's.
      if (!isInRange(entry.key, chain.range ?? {})) continue;
      const key = keys.get(entry.key) ?? {};
      keys.set(entry.key, key);
      // S3 lists a key's versions newest first: the first is the one a marker went over.
      if (!entry.marker) key.kept ??= entry.size;
      else if (entry.latest) key.markedAt = entry.modified ?? Infinity;
    }
  }
  return keys;
}
