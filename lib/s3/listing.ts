import { ListObjectsV2Command, ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Cursor, ListedObject } from '../core/index.ts';

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
 * rolled-up prefix would roll it up again.
 */
export async function* paginatePages(
  { client, pageSize = 1000 }: PagerConfiguration,
  input: PagerInput,
): AsyncGenerator<ListingPage> {
  let after = input.After?.key;
  let token: string | undefined;
  for (;;) {
    const response = await client.send(
      new ListObjectsV2Command({
        Bucket: input.Bucket,
        Prefix: input.Prefix,
        MaxKeys: Math.min(pageSize, 1000),
        ...(input.Delimiter ? { Delimiter: input.Delimiter } : {}),
        ...(token ? { ContinuationToken: token } : after ? { StartAfter: after } : {}),
      }),
    );
    const objects = (response.Contents ?? []).map((object) => ({
      key: object.Key ?? '',
      size: object.Size ?? 0,
    }));
    const prefixes = (response.CommonPrefixes ?? []).map((entry) => entry.Prefix ?? '');
    const lastKey = objects.at(-1)?.key ?? after;
    const next = response.IsTruncated && lastKey ? { key: lastKey } : undefined;
    yield { objects, prefixes, ...(next ? { next } : {}) };
    if (!response.IsTruncated) return;
    if (input.Delimiter) token = response.NextContinuationToken;
    else after = lastKey;
  }
}

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
        ...(input.Delimiter ? { Delimiter: input.Delimiter } : {}),
        ...(marker ? { KeyMarker: marker.key } : {}),
        ...(marker?.versionId ? { VersionIdMarker: marker.versionId } : {}),
      }),
    );
    const entries: ListedObject[] = [
      ...(response.Versions ?? []).map((version) => ({
        key: version.Key ?? '',
        size: version.Size ?? 0,
        versionId: version.VersionId ?? 'null',
      })),
      ...(response.DeleteMarkers ?? []).map((deleteMarker) => ({
        key: deleteMarker.Key ?? '',
        size: 0,
        versionId: deleteMarker.VersionId ?? 'null',
        marker: true,
      })),
    ];
    // S3 answers versions and delete markers apart: one list, by key (stable within a key).
    entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const prefixes = (response.CommonPrefixes ?? []).map((entry) => entry.Prefix ?? '');
    const next: Cursor | undefined =
      response.IsTruncated && response.NextKeyMarker
        ? {
            key: response.NextKeyMarker,
            ...(response.NextVersionIdMarker ? { versionId: response.NextVersionIdMarker } : {}),
          }
        : undefined;
    yield { objects: entries, prefixes, ...(next ? { next } : {}) };
    if (!next) return;
    marker = next;
  }
}

/** The first page only: what one worker lists for one message. */
export async function firstPage(
  configuration: PagerConfiguration,
  input: PagerInput,
  versioned: boolean,
): Promise<ListingPage> {
  const pages = versioned
    ? paginateVersionPages(configuration, input)
    : paginatePages(configuration, input);
  for await (const page of pages) return page;
  throw new Error('unreachable: a listing yields at least one page');
}

/** The child prefixes of a location, and whether anything lies directly under it. */
export async function childrenOf(
  client: S3Client,
  location: { bucket: string; prefix: string },
  versioned: boolean,
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
  }
  return { prefixes, direct };
}
