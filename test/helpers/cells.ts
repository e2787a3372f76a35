import type { S3Client } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import type { StreamStore } from '../../lib/store/index.ts';
import { type ApiClient, parseLocation, waitFor } from './http.ts';
import { listAll, partitionedObjects, seedObjects } from './s3.ts';

/** What one test cell seeded: the stream to delete and its neighbours, which must survive. */
export interface Cell {
  tenant: string;
  location: { bucket: string; prefix: string };
  objects: number;
  bytes: number;
  neighbours: Array<{ where: { bucket: string; prefix: string }; objects: Map<string, number> }>;
}

/**
 * Creates `tenant/logs` with `objects` objects over three partitions plus one ingested batch,
 * and two neighbours that a deletion must never touch: `tenant/logs2` (a name that `logs` is a
 * prefix of) and `x<tenant>/logs` (the same name under another tenant).
 */
export async function prepareCell(
  api: ApiClient,
  s3: S3Client,
  tenant: string,
  objects = 90,
): Promise<Cell> {
  const created = await api.create(tenant, 'logs');
  expect(created.status).toBe(201);
  const location = parseLocation(String(created.body.location));
  const neighbours: Cell['neighbours'] = [];
  for (const [owner, name] of [
    [tenant, 'logs2'],
    [`x${tenant}`, 'logs'],
  ] as const) {
    const reply = await api.create(owner, name);
    const where = parseLocation(String(reply.body.location));
    await seedObjects(s3, where.bucket, partitionedObjects(where.prefix, 10, 2));
    neighbours.push({ where, objects: await listAll(s3, where.bucket, where.prefix) });
  }
  expect((await api.ingest(tenant, 'logs', [{ cell: tenant }])).status).toBe(201);
  await seedObjects(s3, location.bucket, partitionedObjects(location.prefix, objects, 3));
  const seeded = await listAll(s3, location.bucket, location.prefix);
  return {
    tenant,
    location,
    objects: seeded.size,
    bytes: [...seeded.values()].reduce((sum, size) => sum + size, 0),
    neighbours,
  };
}

/** Deletes, retrying the request itself if the server dies or fails while answering. */
export async function requestDeletion(api: ApiClient, tenant: string, query = ''): Promise<string> {
  return waitFor(
    'a 202 to DELETE',
    async () => {
      const reply = await api.delete(tenant, 'logs', query);
      if (reply.status === 202) return String(reply.body.deletionId);
      // A DELETE that failed after its tombstone was written (a failpoint) started a deletion
      // all the same, and a small one may have ended before the retry: then the stream is gone
      // (404) and the deletion is the tenant's one of that stream, as a client would look it up.
      if (reply.status !== 404) return undefined;
      const { body } = await api.deletions(tenant);
      const listed = (body.deletions ?? []) as Array<{ deletionId: string; stream?: string }>;
      return listed.find((deletion) => deletion.stream === 'logs')?.deletionId;
    },
    60_000,
    500,
  );
}

export async function waitForEnd(
  api: ApiClient,
  tenant: string,
  deletionId: string,
  timeoutMs = 120_000,
) {
  return waitFor(
    `deletion ${deletionId} to end`,
    async () => {
      const { body } = await api.deletion(tenant, deletionId);
      return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
    },
    timeoutMs,
    300,
  );
}

/**
 * The invariants every cell must end with: COMPLETED with exact counts, an empty location,
 * every neighbour object intact, and the name usable again.
 */
export async function assertCellCompleted(
  api: ApiClient,
  s3: S3Client,
  cell: Cell,
  receipt: Record<string, unknown>,
) {
  expect(receipt).toMatchObject({
    state: 'COMPLETED',
    objectsDeleted: cell.objects,
    bytesDeleted: cell.bytes,
  });
  expect((await listAll(s3, cell.location.bucket, cell.location.prefix)).size).toBe(0);
  for (const neighbour of cell.neighbours) {
    expect(await listAll(s3, neighbour.where.bucket, neighbour.where.prefix)).toEqual(
      neighbour.objects,
    );
  }
  const again = await api.create(cell.tenant, 'logs');
  expect(again.status).toBe(201);
  expect(again.body.generation).toBe(2);
  expect((await api.ingest(cell.tenant, 'logs', [{ again: true }])).status).toBe(201);
}

/** The days of the partitions `seedDayPartitions` writes. */
const PARTITION_DAYS = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04'];

/**
 * A new stream `logs` of `tenant` with 6 objects in each of four `dt=` day partitions
 * (2026-01-01 to 2026-01-04), and 3 keys outside them (`manifest.json`, `schema/v1.json`,
 * `dt=bogus/x.json`): 27 objects.
 */
export async function seedDayPartitions(api: ApiClient, s3: S3Client, tenant: string) {
  const created = await api.create(tenant, 'logs');
  const { bucket, prefix } = parseLocation(String(created.body.location));
  const objects = PARTITION_DAYS.flatMap((day) =>
    Array.from({ length: 6 }, (_, n) => ({ key: `${prefix}dt=${day}/part-${n}.json`, body: day })),
  );
  await seedObjects(s3, bucket, [
    ...objects,
    { key: `${prefix}manifest.json`, body: '{}' },
    { key: `${prefix}schema/v1.json`, body: '{}' },
    { key: `${prefix}dt=bogus/x.json`, body: '{}' },
  ]);
  return { bucket, prefix };
}

/**
 * The retention policies of `tenant`'s streams alone, for a RetentionRunner's `streams`: a run
 * over them requests nothing for the streams other tests left in the table.
 */
export const policiesOf = (streams: Pick<StreamStore, 'withRetention'>, tenant: string) => ({
  async *withRetention() {
    for await (const stream of streams.withRetention()) if (stream.tenant === tenant) yield stream;
  },
});
