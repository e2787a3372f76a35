import {
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { type Cursor, compareKeys, type ListedObject } from '../core/index.ts';

/**
 * Keys come back URL-encoded (`EncodingType: 'url'`): S3 can hold keys that an XML 1.0 answer
 * cannot carry. S3 says so in the answer's own EncodingType, and only then are keys decoded
 * (as S3 encodes them: a space as `+`).
 */
export const decodeKey = (key: string, encoding: string | undefined) =>
  encoding === 'url' ? decodeURIComponent(key.replace(/\+/g, ' ')) : key;

/** One page of a listing, plain or versioned. */
export interface ListingPage {
  /** Objects, or in a versioned bucket versions and delete markers, in listing order by key. */
  objects: ListedObject[];
  /** Child prefixes, when listed with a delimiter. */
  prefixes: string[];
  /** Where the next page starts; absent when this page is the last. */
  next?: Cursor;
}

export interface PagerConfiguration {
  client: S3Client;
  /** Entries per page, at most 1,000 (S3's own limit). */
  pageSize?: number;
}

export interface PagerInput {
  Bucket: string;
  Prefix: string;
  /** Start after this position (a key; in a versioned listing, a key and version). */
  After?: Cursor | undefined;
  Delimiter?: string;
}

/**
 * Pages through a prefix from a written-down position, so that any page can be resumed from
 * its record. Shaped like the SDK's own paginators. Plain listings start after a key
 * (`StartAfter`); with a delimiter they follow continuation tokens, since a StartAfter inside a
 * rolled-up prefix would roll it up again. S3 may answer a truncated page with no keys (behind
 * many delete markers): that page's position is its continuation token, which its `next` keeps.
 */
export async function* paginatePages(
  { client, pageSize = 1000 }: PagerConfiguration,
  input: PagerInput,
): AsyncGenerator<ListingPage> {
  let after = input.After?.key;
  let token = input.After?.token;
  const list = async () =>
    await client.send(
      new ListObjectsV2Command({
        Bucket: input.Bucket,
        Prefix: input.Prefix,
        MaxKeys: Math.min(pageSize, 1000),
        EncodingType: 'url',
        ...(input.Delimiter ? { Delimiter: input.Delimiter } : {}),
        ...(token ? { ContinuationToken: token } : after ? { StartAfter: after } : {}),
      }),
    );
  for (;;) {
    const response = await list().catch((error: unknown) => {
      // A written-down token S3 no longer takes: the key it went on from is a start too.
      if (!token || token !== input.After?.token || !isRefusedToken(error)) throw error;
      token = undefined;
      return list();
    });
    const decode = (key: string | undefined) => decodeKey(key ?? '', response.EncodingType);
    const objects = (response.Contents ?? []).map((object) => ({
      key: decode(object.Key),
      size: object.Size ?? 0,
      ...(object.LastModified ? { modified: object.LastModified.getTime() } : {}),
      ...(object.ETag ? { etag: object.ETag } : {}),
    }));
    const prefixes = (response.CommonPrefixes ?? []).map((entry) => decode(entry.Prefix));
    if (!response.IsTruncated) {
      yield { objects, prefixes };
      return;
    }
    after = objects.at(-1)?.key ?? after;
    token = response.NextContinuationToken;
    if (objects.length === 0 && !token) {
      throw new Error(`S3 answered a truncated page of ${input.Prefix} with no keys and no token`);
    }
    // A page with keys is resumed after its last key; an empty one only by its token.
    const next: Cursor = {
      key: after ?? '',
      ...(objects.length === 0 && token ? { token } : {}),
    };
    yield { objects, prefixes, next };
  }
}

/** S3's answer to a continuation token it does not take (400 InvalidArgument). */
const isRefusedToken = (error: unknown) =>
  error instanceof S3ServiceException &&
  error.name === 'InvalidArgument' &&
  /continuation token/i.test(error.message);

/**
 * Pages through every version and delete marker under a prefix with S3's own markers
 * (`KeyMarker` + `VersionIdMarker`, from `NextKeyMarker` + `NextVersionIdMarker`), so a page
 * may end inside a key's versions and the next one go on from there.
 */
export async function* paginateVersionPages(
  { client, pageSize = 1000 }: PagerConfiguration,
  input: PagerInput,
): AsyncGenerator<ListingPage> {
  let marker = input.After;
  for (;;) {
    const response = await client.send(
      new ListObjectVersionsCommand({
        Bucket: input.Bucket,
        Prefix: input.Prefix,
        MaxKeys: Math.min(pageSize, 1000),
        EncodingType: 'url',
        ...(input.Delimiter ? { Delimiter: input.Delimiter } : {}),
        ...(marker ? { KeyMarker: marker.key } : {}),
        ...(marker?.versionId ? { VersionIdMarker: marker.versionId } : {}),
      }),
    );
    const decode = (key: string | undefined) => decodeKey(key ?? '', response.EncodingType);
    const entries: ListedObject[] = [
      ...(response.Versions ?? []).map((version) => ({
        key: decode(version.Key),
        size: version.Size ?? 0,
        versionId: version.VersionId ?? 'null',
        ...(version.IsLatest ? { latest: true as const } : {}),
        ...(version.LastModified ? { modified: version.LastModified.getTime() } : {}),
        ...(version.ETag ? { etag: version.ETag } : {}),
      })),
      ...(response.DeleteMarkers ?? []).map((deleteMarker) => ({
        key: decode(deleteMarker.Key),
        size: 0,
        versionId: deleteMarker.VersionId ?? 'null',
        marker: true,
        ...(deleteMarker.IsLatest ? { latest: true as const } : {}),
        ...(deleteMarker.LastModified ? { modified: deleteMarker.LastModified.getTime() } : {}),
      })),
    ];
    // S3 answers versions and delete markers apart: one list, by key (stable within a key).
    entries.sort((a, b) => compareKeys(a.key, b.key));
    const prefixes = (response.CommonPrefixes ?? []).map((entry) => decode(entry.Prefix));
    const next: Cursor | undefined =
      response.IsTruncated && response.NextKeyMarker
        ? {
            key: decode(response.NextKeyMarker),
            ...(response.NextVersionIdMarker ? { versionId: response.NextVersionIdMarker } : {}),
          }
        : undefined;
    yield { objects: entries, prefixes, ...(next ? { next } : {}) };
    if (!next) return;
    marker = next;
  }
}

/**
 * Empty truncated pages one call skips before it returns one (with where it goes on): a
 * listing may hold any number of them in a row, and a worker's time is bounded.
 */
const MAX_EMPTY_PAGES = 10;

/**
 * The first page with entries (S3 may answer a truncated page with none): what one worker
 * lists for one message. The last page, empty or not, ends the listing. After a bounded run of
 * empty truncated pages the last of them comes back: its `next` moves past them, so recording
 * it moves the chain forward.
 */
export async function firstPage(
  configuration: PagerConfiguration,
  input: PagerInput,
  versioned: boolean,
): Promise<ListingPage> {
  const pages = versioned
    ? paginateVersionPages(configuration, input)
    : paginatePages(configuration, input);
  let skipped = 0;
  let last: ListingPage | undefined;
  for await (const page of pages) {
    last = page;
    const empty = page.objects.length === 0 && page.prefixes.length === 0;
    if (!empty || !page.next || ++skipped > MAX_EMPTY_PAGES) return page;
  }
  if (!last) throw new Error('unreachable: a listing yields at least one page');
  return last;
}

/**
 * The child prefixes of a location, and whether anything lies directly under it; `onDirect`
 * sees the entries directly under it, page by page (a plan counts them).
 */
export async function childrenOf(
  client: S3Client,
  location: { bucket: string; prefix: string },
  versioned: boolean,
  onDirect?: (entries: ListedObject[]) => void,
): Promise<{ prefixes: string[]; direct: boolean }> {
  const input = { Bucket: location.bucket, Prefix: location.prefix, Delimiter: '/' };
  const pages = versioned
    ? paginateVersionPages({ client }, input)
    : paginatePages({ client }, input);
  const prefixes: string[] = [];
  let direct = false;
  for await (const page of pages) {
    prefixes.push(...page.prefixes);
    direct ||= page.objects.length > 0;
    if (page.objects.length > 0) onDirect?.(page.objects);
  }
  return { prefixes, direct };
}
