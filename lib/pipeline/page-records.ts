import {
  type ChainLayout,
  type ChainRecord,
  type Cursor,
  compareKeys,
  isInRange,
  isInScope,
  type ListedFirstPage,
  type ListedObject,
  type PageRecord,
} from '../core/index.ts';

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
