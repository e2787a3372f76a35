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
import { firstPage, type ListingPage } from '../s3/index.ts';

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
    // An empty page with more to list (S3 may answer so) is not the page's end.
    if (!listing.next || (last && reachesEnd(last, page))) return objects;
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
