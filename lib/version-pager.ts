import {
  GetBucketVersioningCommand,
  ListObjectVersionsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ListedObject } from './pager.ts';

/**
 * One page of a versioned bucket: every version and delete marker of the keys after
 * `startAfter`, whole keys only, so a page is a key range (like an unversioned page) and a
 * resumed page can be re-listed by range. A key with more versions than a page holds is the
 * exception: its page is `partial`, names its versions, and the chain does not move past it.
 * The next page is listed only once this one is deleted (no pipelining in versioned chains).
 */
export interface VersionPage {
  objects: ListedObject[];
  truncated: boolean;
  /** Last key of the page; for a partial page, the key whose versions continue. */
  lastKey?: string;
  partial: boolean;
}

export async function firstVersionPage(
  { client, pageSize = 1000 }: { client: S3Client; pageSize?: number },
  input: { Bucket: string; Prefix: string; StartAfter?: string | undefined },
): Promise<VersionPage> {
  const entries: ListedObject[] = [];
  let truncated = true;
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  // From the start of the prefix, keeping keys after StartAfter: a chain's earlier pages are
  // deleted, so little comes before it (keys that failed). Not KeyMarker=StartAfter: moto then
  // skips the first version at or after the marker, which loses one if the marker key is gone.
  const after = (key: string) => input.StartAfter === undefined || key > input.StartAfter;
  while (entries.length === 0 && truncated) {
    const response = await client.send(
      new ListObjectVersionsCommand({
        Bucket: input.Bucket,
        Prefix: input.Prefix,
        MaxKeys: Math.min(pageSize, 1000),
        ...(keyMarker ? { KeyMarker: keyMarker } : {}),
        ...(versionIdMarker ? { VersionIdMarker: versionIdMarker } : {}),
      }),
    );
    entries.push(
      ...[
        ...(response.Versions ?? []).map((version) => ({
          key: version.Key ?? '',
          size: version.Size ?? 0,
          versionId: version.VersionId ?? 'null',
        })),
        ...(response.DeleteMarkers ?? []).map((marker) => ({
          key: marker.Key ?? '',
          size: 0,
          versionId: marker.VersionId ?? 'null',
          marker: true,
        })),
      ].filter((entry) => after(entry.key)),
    );
    truncated = response.IsTruncated === true;
    keyMarker = response.NextKeyMarker;
    versionIdMarker = response.NextVersionIdMarker;
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const last = entries.at(-1)?.key;
  if (!truncated || last === undefined) {
    return { objects: entries, truncated, partial: false, ...(last ? { lastKey: last } : {}) };
  }
  // The last key may have more versions on the next page: leave it whole to the next page.
  const whole = entries.filter((entry) => entry.key !== last);
  if (whole.length > 0) {
    return { objects: whole, truncated, partial: false, lastKey: whole.at(-1)?.key ?? last };
  }
  return { objects: entries, truncated, partial: true, lastKey: last };
}

/** Child prefixes (and whether there are direct entries) of a versioned location. */
export async function versionedChildren(client: S3Client, bucket: string, prefix: string) {
  const prefixes: string[] = [];
  let direct = false;
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const response = await client.send(
      new ListObjectVersionsCommand({
        Bucket: bucket,
        Prefix: prefix,
        Delimiter: '/',
        ...(keyMarker ? { KeyMarker: keyMarker } : {}),
        ...(versionIdMarker ? { VersionIdMarker: versionIdMarker } : {}),
      }),
    );
    prefixes.push(...(response.CommonPrefixes ?? []).map((entry) => entry.Prefix ?? ''));
    direct ||= (response.Versions?.length ?? 0) + (response.DeleteMarkers?.length ?? 0) > 0;
    if (!response.IsTruncated) return { prefixes, direct };
    keyMarker = response.NextKeyMarker;
    versionIdMarker = response.NextVersionIdMarker;
  }
}

/**
 * What is left under a prefix, seen through versions: nothing at all, only the current objects
 * of an unversioned bucket, or versions and delete markers (the bucket keeps versions).
 */
export async function whatIsLeft(client: S3Client, bucket: string, prefix: string) {
  const response = await client.send(
    new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, MaxKeys: 1 }),
  );
  const version = response.Versions?.[0];
  const marker = response.DeleteMarkers?.[0];
  const key = version?.Key ?? marker?.Key;
  if (key === undefined) return { empty: true as const };
  const versioned = marker !== undefined || (version?.VersionId ?? 'null') !== 'null';
  return { empty: false as const, key, versioned };
}

export async function isBucketVersioned(client: S3Client, bucket: string) {
  const { Status } = await client.send(new GetBucketVersioningCommand({ Bucket: bucket }));
  return Status === 'Enabled' || Status === 'Suspended';
}
