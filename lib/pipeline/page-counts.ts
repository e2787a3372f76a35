import type { S3Client } from '@aws-sdk/client-s3';
import {
  type ChainRecord,
  isInRange,
  type ListedObject,
  type PageRecord,
  startOf,
} from '../core/index.ts';
import { type PageResult, paginateVersionPages } from '../s3/index.ts';
import type { PageCounts } from '../store/index.ts';
import { isInPage, listPageAgain } from './page-records.ts';
import type { Chains } from './ports.ts';

// What a page's delete counts: what is left of a page listed again, and what a plain page's
// delete took where S3 answered delete markers (a bucket that keeps versions, or kept them
// once), read from the page's versions where a marker leaves it open.

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
  const hidden = await hiddenByMarkers(client, chain, page, remaining);
  const counted = { count: page.count - hidden.objects, bytes: page.bytes - hidden.bytes };
  return { page: { ...page, ...counted }, remaining };
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

/** A marker LastModified (to S3's second) this close before a page's listing may follow it. */
const MARKER_CLOCK_MS = 1_000;

/**
 * What of a plain page's count an earlier attempt's delete did not delete but hid behind a
 * delete marker (the bucket turned versioned after the page was listed): the page's keys whose
 * current version is a marker laid since the page was listed, over a version, and that
 * version's bytes. Such a key was not deleted; the versioned round that follows deletes and
 * counts its versions. A marker from before the listing hid its key from it: never counted.
 * Keys this attempt listed as current (`remaining`) are its own to count (`countOf`), whatever
 * marker a duplicate lays on them after that listing.
 */
async function hiddenByMarkers(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range'>,
  page: PageRecord,
  remaining: ListedObject[],
): Promise<{ objects: number; bytes: number }> {
  const since = (page.listedAt ?? 0) - MARKER_CLOCK_MS;
  const current = new Set(remaining.map((object) => object.key));
  const over = [...(await versionsOfPage(client, chain, page))]
    .filter(([key, { markedAt, kept }]) => {
      return !current.has(key) && markedAt !== undefined && markedAt >= since && kept.length > 0;
    })
    .map(([, { kept }]) => kept[0]?.size ?? 0);
  return { objects: over.length, bytes: over.reduce((sum, size) => sum + size, 0) };
}

/**
 * What a page's delete counts, from the listing that opened the page: a resumed page counts
 * entries an earlier attempt deleted, and a duplicate counts nothing (completePage counts a
 * page once). A key S3 answered with a delete marker (a plain page in a bucket that keeps
 * versions) was not deleted when the version listed is still there: with versioning Enabled
 * the marker only hides it (S3 answers the marker's own version id), and the versioned round
 * that follows counts it. Suspended, S3 removed the key's null version and laid a null marker
 * in its place: the data listed went with it only if it was the null version, so those keys'
 * versions are read, and a key counts as deleted unless the version listed is left.
 */
export async function countOf(
  client: S3Client,
  chain: Pick<ChainRecord, 'bucket' | 'prefix' | 'range'>,
  page: PageRecord,
  result: PageResult,
): Promise<PageCounts> {
  let gone: ListedObject[] = [];
  if (result.nullMarkers.length > 0) {
    const versions = await versionsOfPage(client, chain, page);
    gone = result.nullMarkers.filter((listed) => {
      return !versions.get(listed.key)?.kept.some((version) => isVersionOf(version, listed));
    });
  }
  const goneBytes = gone.reduce((sum, object) => sum + object.size, 0);
  return {
    objects: page.count - result.failedObjects - result.markersLaid + gone.length,
    bytes: page.bytes - result.failedBytes - result.markersLaidBytes + goneBytes,
    failed: result.failures.length,
  };
}

/**
 * Whether `version` is the one `listed` showed: the same size, LastModified and ETag where S3
 * gave them. Can it not be told apart (neither gave a date or a tag), it is taken for it: the
 * key is then left to the versioned round, which counts what it finds.
 */
const isVersionOf = (version: ListedObject, listed: ListedObject) =>
  version.size === listed.size &&
  (version.modified === undefined ||
    listed.modified === undefined ||
    version.modified === listed.modified) &&
  (version.etag === undefined || listed.etag === undefined || version.etag === listed.etag);

interface KeyVersions {
  /** When its current version is a delete marker: when that was laid (S3's clock). */
  markedAt?: number;
  /** Its versions that are not markers, newest first. */
  kept: ListedObject[];
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
      const key = keys.get(entry.key) ?? { kept: [] };
      keys.set(entry.key, key);
      // S3 lists a key's versions newest first: kept[0] is the one a marker went over.
      if (!entry.marker) key.kept.push(entry);
      else if (entry.latest) key.markedAt = entry.modified ?? Infinity;
    }
  }
  return keys;
}
