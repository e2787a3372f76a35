import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemsOf } from '../../lib/store/deletion-items.ts';
import { documentClient, type ItemKey, keys, Table, TTL_ATTRIBUTE } from '../../lib/store/index.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * The pipeline end to end: create, ingest, seed a few thousand objects over several date
 * partitions, delete, and check the receipt, the emptiness of the location and that nothing
 * of any other stream was touched.
 */
describe('deleting a stream end to end', () => {
  let target: TestTarget;
  let api: ApiClient;
  const seeded = { objects: 0, bytes: 0 };
  const survivors = new Map<string, Map<string, number>>();
  let location: { bucket: string; prefix: string };
  let deletionId: string;

  beforeAll(async () => {
    // Small pages make every chain several pages long, so pipelining and counting are exercised.
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '250' } });
    api = apiClient(target.baseUrl);

    const created = await api.create('acme', 'logs');
    expect(created.status).toBe(201);
    location = parseLocation(String(created.body.location));
    for (const [tenant, stream] of [
      ['acme', 'logs2'],
      ['globex', 'logs'],
    ] as const) {
      const sibling = await api.create(tenant, stream);
      const where = parseLocation(String(sibling.body.location));
      await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 60, 3));
      await api.ingest(tenant, stream, [{ kept: true }]);
      survivors.set(`${tenant}/${stream}`, await listAll(target.s3, where.bucket, where.prefix));
    }

    for (let batch = 0; batch < 3; batch++) {
      const ingested = await api.ingest('acme', 'logs', [{ batch }, { batch, second: true }]);
      expect(ingested.status).toBe(201);
    }
    // 2,400 objects over six partitions, and two keys directly under the location.
    const objects = [
      ...partitionedObjects(location.prefix, 2_400, 6),
      { key: `${location.prefix}manifest.json`, body: '{"v":1}' },
      { key: `${location.prefix}_SUCCESS`, body: 'ok' },
    ];
    await seedObjects(target.s3, location.bucket, objects);
    const before = await listAll(target.s3, location.bucket, location.prefix);
    seeded.objects = before.size;
    seeded.bytes = [...before.values()].reduce((sum, size) => sum + size, 0);
  });

  afterAll(async () => {
    await target?.stop();
  });

  it('answers 202 at once with the deletion and its Location', async () => {
    const reply = await api.delete('acme', 'logs');

    expect(reply.status).toBe(202);
    deletionId = String(reply.body.deletionId);
    expect(reply.headers.get('location')).toBe(`/v1/tenants/acme/deletions/${deletionId}`);
    expect(reply.body).toMatchObject({
      tenant: 'acme',
      stream: 'logs',
      generation: 1,
      location: `s3://${location.bucket}/${location.prefix}`,
      objectsDeleted: 0,
      attempts: 1,
    });
  });

  it('answers a repeated DELETE with the same deletion', async () => {
    const reply = await api.delete('acme', 'logs');

    expect(reply.status).toBe(202);
    expect(reply.body.deletionId).toBe(deletionId);
  });

  it.each([
    ['create', () => api.create('acme', 'logs')],
    ['ingest', () => api.ingest('acme', 'logs', [{ late: true }])],
  ])('refuses to %s while the deletion runs: 409 with Retry-After', async (_, call) => {
    const reply = await call();

    expect(reply.status).toBe(409);
    expect(reply.body).toMatchObject({ error: { code: 'StreamDeleting' } });
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('shows the stream as DELETING with its deletion id', async () => {
    const reply = await api.get('acme', 'logs');

    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ state: 'DELETING', deletionId });
  });

  it('completes with an exact receipt and an empty location', async () => {
    const receipt = await waitFor('the deletion to complete', async () => {
      const reply = await api.deletion('acme', deletionId);
      return reply.body.state === 'COMPLETED' || reply.body.state === 'FAILED'
        ? reply.body
        : undefined;
    });

    expect(receipt).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: seeded.objects,
      bytesDeleted: seeded.bytes,
    });
    expect(receipt.failures).toBeUndefined();
    expect(Date.parse(String(receipt.completedAt))).toBeGreaterThanOrEqual(
      Date.parse(String(receipt.requestedAt)),
    );
    expect((await listAll(target.s3, location.bucket, location.prefix)).size).toBe(0);
  });

  it.skipIf(process.env.LETHE_TEST_API_URL)(
    "leaves the deletion's own items (chains: they hold key names) to expire with its receipt",
    async () => {
      // Prepare: the table as the functions see it
      if (!target.local) throw new Error('needs the in-process local stack');
      const table = new Table(
        documentClient(target.local.clients.dynamodb),
        target.local.resources.tableName,
      );
      const receipt = await table.read<Record<string, unknown>>(keys.deletion('acme', deletionId));

      // Act
      const expiries: unknown[] = [];
      for await (const key of table.query<ItemKey>(itemsOf(deletionId), true)) {
        expiries.push((await table.read<Record<string, unknown>>(key))?.[TTL_ATTRIBUTE]);
      }

      // Assess: several chains, each with the receipt's expiry
      expect(receipt?.[TTL_ATTRIBUTE]).toEqual(expect.any(Number));
      expect(expiries.length).toBeGreaterThan(1);
      expect(new Set(expiries)).toEqual(new Set([receipt?.[TTL_ATTRIBUTE]]));
    },
  );

  it('leaves every object of a sibling name and of another tenant', async () => {
    for (const [name, before] of survivors) {
      const [tenant = '', stream = ''] = name.split('/');
      const where = parseLocation(String((await api.get(tenant, stream)).body.location));

      const after = await listAll(target.s3, where.bucket, where.prefix);

      expect(after).toEqual(before);
    }
  });

  it('frees the name: 404, then a re-create gets a higher generation and a new location', async () => {
    expect((await api.get('acme', 'logs')).status).toBe(404);

    const created = await api.create('acme', 'logs');
    const ingested = await api.ingest('acme', 'logs', [{ reborn: true }]);

    expect(created.status).toBe(201);
    expect(created.body.generation).toBe(2);
    expect(created.body.location).not.toBe(`s3://${location.bucket}/${location.prefix}`);
    expect(ingested.status).toBe(201);
    expect(String(ingested.body.key)).toMatch(/^streams\/acme\/logs\/2\//);
  });

  it('keeps the receipt readable, and only for its own tenant', async () => {
    const own = await api.deletion('acme', deletionId);
    const other = await api.deletion('globex', deletionId);

    expect(own.status).toBe(200);
    expect(own.body.state).toBe('COMPLETED');
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ error: { code: 'DeletionNotFound' } });
  });
});
