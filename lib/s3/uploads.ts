import {
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  NoSuchUpload,
  type S3Client,
} from '@aws-sdk/client-s3';
import { decodeKey } from './listing.ts';

/** A multipart upload in progress: invisible to object listings, billed, and able to complete. */
export interface Upload {
  key: string;
  uploadId: string;
}

/** Every upload in progress under a prefix, page by page (S3's own markers). */
export async function* uploadsUnder(
  client: S3Client,
  bucket: string,
  prefix: string,
  pageSize = 1000,
): AsyncGenerator<Upload[]> {
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (;;) {
    const response = await client.send(
      new ListMultipartUploadsCommand({
        Bucket: bucket,
        Prefix: prefix,
        MaxUploads: pageSize,
        EncodingType: 'url',
        ...(keyMarker ? { KeyMarker: keyMarker } : {}),
        ...(uploadIdMarker ? { UploadIdMarker: uploadIdMarker } : {}),
      }),
    );
    const decode = (key: string | undefined) => decodeKey(key ?? '', response.EncodingType);
    yield (response.Uploads ?? []).map((upload) => ({
      key: decode(upload.Key),
      uploadId: upload.UploadId ?? '',
    }));
    if (!response.IsTruncated || !response.NextKeyMarker) return;
    keyMarker = decode(response.NextKeyMarker);
    uploadIdMarker = response.NextUploadIdMarker;
  }
}

/**
 * Aborts an upload: true if this call aborted it. One gone already is not an error, and not
 * this call's: another verification aborted it, or it completed (an object now, which the
 * next look finds and deletes as one).
 */
export async function abortUpload(client: S3Client, bucket: string, upload: Upload) {
  try {
    await client.send(
      new AbortMultipartUploadCommand({
        Bucket: bucket,
        Key: upload.key,
        UploadId: upload.uploadId,
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof NoSuchUpload)) throw error;
    return false;
  }
}

/** Aborts each upload in turn: the ones this call aborted. */
export async function abortAll(client: S3Client, bucket: string, uploads: readonly Upload[]) {
  const aborted: Upload[] = [];
  for (const upload of uploads) if (await abortUpload(client, bucket, upload)) aborted.push(upload);
  return aborted;
}
