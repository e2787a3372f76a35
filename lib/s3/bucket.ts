import {
  GetBucketVersioningCommand,
  ListObjectVersionsCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { isInScope, type Scope } from '../core/index.ts';
import { childrenOf } from './listing.ts';
import { uploadsUnder } from './uploads.ts';

/** S3's refusals of a whole request that asking again will not change. */
const REFUSALS = new Set(['AccessDenied', 'AllAccessDisabled', 'NoSuchBucket', 'AccountProblem']);

/** True when S3 refused a request for good: the bucket is gone, or its data may not be read. */
export const isRefusal = (error: unknown): error is S3ServiceException =>
  error instanceof S3ServiceException && REFUSALS.has(error.name);

/** What is left of a location. */
export type Leftovers =
  | { empty: true }
  | {
      empty: false;
      /** A key that is left, for a reason in the receipt. */
      key: string;
      /** Versions or delete markers are left: the bucket keeps versions. */
      versioned: boolean;
      /** What is left is a multipart upload in progress (started after the last abort). */
      upload?: true;
    };

/**
 * What is left under a prefix, seen through versions and uploads in progress: nothing at all,
 * only the current objects of an unversioned bucket, versions and delete markers (the bucket
 * keeps versions), or a multipart upload in progress.
 */
export async function whatIsLeft(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<Leftovers> {
  let markers: { KeyMarker?: string; VersionIdMarker?: string } = {};
  for (;;) {
    const response = await client.send(
      new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, MaxKeys: 1, ...markers }),
    );
    const version = response.Versions?.[0];
    const marker = response.DeleteMarkers?.[0];
    const key = version?.Key ?? marker?.Key;
    if (key !== undefined) {
      const versioned = marker !== undefined || (version?.VersionId ?? 'null') !== 'null';
      return { empty: false, key, versioned };
    }
    // An empty page that S3 says is truncated is not the end: it goes on from its markers.
    if (!response.IsTruncated || !response.NextKeyMarker) break;
    markers = {
      KeyMarker: response.NextKeyMarker,
      ...(response.NextVersionIdMarker ? { VersionIdMarker: response.NextVersionIdMarker } : {}),
    };
  }
  // Uploads in progress are invisible to both listings and can complete into the location.
  for await (const [upload] of uploadsUnder(client, bucket, prefix, 1)) {
    return upload
      ? { empty: false, key: upload.key, versioned: false, upload: true }
      : { empty: true };
  }
  return { empty: true };
}

/** True when the bucket keeps versions (Enabled), or kept them once (Suspended). */
export async function isBucketVersioned(client: S3Client, bucket: string): Promise<boolean> {
  const { Status } = await client.send(new GetBucketVersioningCommand({ Bucket: bucket }));
  return Status === 'Enabled' || Status === 'Suspended';
}

/**
 * What is left of a deletion's scope: the whole location for a stream deletion; for a
 * partition deletion, only its partitions (and the uploads in progress inside them).
 */
export async function whatIsLeftOf(
  client: S3Client,
  bucket: string,
  scope: Scope,
): Promise<Leftovers> {
  if (scope.before === undefined) return whatIsLeft(client, bucket, scope.location);
  // Versions and delete markers roll up as well as objects: one listing sees every partition.
  const { prefixes } = await childrenOf(client, { bucket, prefix: scope.location }, true);
  for (const prefix of prefixes.filter((child) => isInScope(child, scope))) {
    const left = await whatIsLeft(client, bucket, prefix);
    if (!left.empty) return left;
  }
  // Uploads in progress roll up in no listing of versions: a partition emptied of objects may
  // still hold some.
  for await (const uploads of uploadsUnder(client, bucket, scope.location)) {
    const inside = uploads.find((upload) => isInScope(upload.key, scope));
    if (inside) return { empty: false, key: inside.key, versioned: false, upload: true };
  }
  return { empty: true };
}
