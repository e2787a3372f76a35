import { CopyObjectCommand, CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { partitionedObjects, seedObjects } from '../test/helpers/s3.ts';

export interface SeedObject {
  key: string;
  body: string;
}

/** How objects get into the emulator before a measurement. */
export type SeedMode = 'bulk' | 'put';

/** `count` objects over `partitions` date partitions under `prefix` (the integration layout). */
export const layout = (prefix: string, count: number, partitions: number): SeedObject[] =>
  partitionedObjects(prefix, count, partitions);

/** The same objects under another prefix: an identical copy for a side-by-side run. */
export const copyOf = (objects: SeedObject[], from: string, to: string): SeedObject[] =>
  objects.map((object) => ({ key: to + object.key.slice(from.length), body: object.body }));

export interface Seeder {
  readonly mode: SeedMode;
  seed(bucket: string, objects: SeedObject[]): Promise<void>;
}

/**
 * `bulk` stores objects through the side door of bench/moto_server_bulk.py (moto's own
 * `put_object`, thousands per request); `put` sends one PutObject per object, 16 at a time,
 * and works against any emulator.
 */
export function createSeeder(mode: SeedMode, endpoint: string, s3: S3Client): Seeder {
  if (mode === 'put') {
    return { mode, seed: async (bucket, objects) => void (await seedObjects(s3, bucket, objects)) };
  }
  return {
    mode,
    async seed(bucket, objects) {
      for (let start = 0; start < objects.length; start += 5_000) {
        const chunk = objects
          .slice(start, start + 5_000)
          .map((object) => [object.key, object.body]);
        const response = await fetch(`${endpoint}/_bench/put-objects`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ bucket, objects: chunk }),
        });
        if (!response.ok) {
          throw new Error(`bulk seeding failed (${response.status}): ${await response.text()}`);
        }
      }
    },
  };
}

export async function createBucket(s3: S3Client, bucket: string) {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}

export interface SeedRates {
  sample: number;
  /** Objects per second of each way to create objects in this emulator. */
  bulk?: number;
  put: number;
  copy: number;
}

/**
 * Measures what seeding costs here, on a small sample: PutObject and CopyObject, 16 at a time
 * (CopyObject was the candidate trick: no body to upload), and the bulk side door.
 */
export async function measureSeedRates(
  s3: S3Client,
  bucket: string,
  sample: number,
  bulk: Seeder | undefined,
): Promise<SeedRates> {
  const objects = layout('seed-rate/put/', sample, 10);
  const rate = async (run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    return sample / ((performance.now() - started) / 1000);
  };
  const put = await rate(() => seedObjects(s3, bucket, objects));
  const copies = copyOf(objects, 'seed-rate/put/', 'seed-rate/copy/');
  const copy = await rate(() =>
    inPool(copies, 16, (object, index) =>
      s3.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: object.key,
          CopySource: `${bucket}/${objects[index]?.key}`,
        }),
      ),
    ),
  );
  const result: SeedRates = { sample, put, copy };
  if (bulk) {
    const bulkObjects = copyOf(objects, 'seed-rate/put/', 'seed-rate/bulk/');
    result.bulk = await rate(() => bulk.seed(bucket, bulkObjects));
  }
  return result;
}

/** Runs `work` over `items`, `concurrency` at a time. */
export async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<unknown>,
) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
