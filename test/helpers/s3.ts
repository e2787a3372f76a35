import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** Writes objects the way a stream's writers would, many at once (the emulator is slow). */
export async function seedObjects(
  s3: S3Client,
  bucket: string,
  objects: Array<{ key: string; body: string }>,
  concurrency = 16,
): Promise<number> {
  let next = 0;
  let bytes = 0;
  const writer = async () => {
    while (next < objects.length) {
      const object = objects[next++];
      if (!object) return;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: object.key, Body: object.body }));
      bytes += Buffer.byteLength(object.body);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, writer));
  return bytes;
}

/** `count` objects spread over `partitions` date partitions under `prefix`. */
export function partitionedObjects(prefix: string, count: number, partitions: number) {
  return Array.from({ length: count }, (_, index) => {
    const day = String((index % partitions) + 1).padStart(2, '0');
    const body = JSON.stringify({ n: index, pad: 'x'.repeat(index % 7) });
    return { key: `${prefix}dt=2026-01-${day}/part-${String(index).padStart(6, '0')}.json`, body };
  });
}

/** Every key under a prefix, with sizes. */
export async function listAll(s3: S3Client, bucket: string, prefix: string) {
  const objects = new Map<string, number>();
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) objects.set(object.Key ?? '', object.Size ?? 0);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return objects;
}
