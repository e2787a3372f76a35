import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  apiClient,
  type HttpReply,
  parseLocation,
  waitFor,
} from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/** Incarnations the churn test goes through; `npm run test:soak` raises it. */
const ROUNDS = Number(process.env.LETHE_RACE_RUNS ?? 3);

/**
 * Invariants 2 and 7 under races: concurrent requests on one name, decided by conditions.
 */
describe('racing requests on one name', () => {
  let target: TestTarget;
  let api: ApiClient;
  beforeAll(async () => {
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '50' } });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const completed = (tenant: string, id: string) =>
    waitFor(`deletion ${id}`, async () => {
      const { body } = await api.deletion(tenant, id);
      return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
    });

  it('admits one deletion and no create or ingest once it is decided', async () => {
    // Prepare: a live stream with objects, then a burst of 36 mixed requests.
    const tenant = 'burst';
    const created = await api.create(tenant, 'logs');
    const where = parseLocation(String(created.body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 100, 2));
    const kinds = Array.from(
      { length: 36 },
      (_, index) => (['delete', 'put', 'post'] as const)[index % 3],
    );

    // Act
    const replies = await Promise.all(
      kinds.map(async (kind, index) => {
        const reply =
          kind === 'delete'
            ? // A window outlasting the burst: it races the tombstone, never the deletion's end
              // (after which the name is free and an ingest is 404).
              await api.delete(tenant, 'logs', '?graceSeconds=5')
            : kind === 'put'
              ? await api.create(tenant, 'logs')
              : await api.ingest(tenant, 'logs', [{ racer: index }]);
        return { kind, reply };
      }),
    );
    const of = (kind: string) =>
      replies.filter((entry) => entry.kind === kind).map((entry) => entry.reply as HttpReply);
    const deletionIds = new Set(of('delete').map((reply) => reply.body.deletionId));
    const [deletionId] = [...deletionIds] as string[];
    const receipt = await completed(tenant, deletionId ?? '');
    const accepted = of('post').filter((reply) => reply.status === 201);

    // Assess: one deletion; every create 200 (before) or 409 (after), never a second
    // incarnation; every ingest 201 (then deleted and counted) or 409; nothing else.
    expect(of('delete').map((reply) => reply.status)).toEqual(Array(12).fill(202));
    expect(deletionIds.size).toBe(1);
    for (const reply of of('put')) expect([200, 409]).toContain(reply.status);
    for (const reply of of('post')) expect([201, 409]).toContain(reply.status);
    for (const reply of accepted)
      expect(String(reply.body.key)).toMatch(/^streams\/burst\/logs\/1\//);
    expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: 100 + accepted.length });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
  });

  it('create, delete, create, delete in quick succession: each incarnation its own', async () => {
    const tenant = 'churn';
    const generations: number[] = [];
    const locations = new Set<string>();
    let previousDeletion: string | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      const created = await waitFor('the name to be free', async () => {
        const reply = await api.create(tenant, 'logs');
        return reply.status === 201 ? reply : undefined;
      });
      generations.push(Number(created.body.generation));
      locations.add(String(created.body.location));
      expect((await api.ingest(tenant, 'logs', [{ round }])).status).toBe(201);
      const deleted = await api.delete(tenant, 'logs');
      expect(deleted.status).toBe(202);
      expect(deleted.body.deletionId).not.toBe(previousDeletion);
      previousDeletion = String(deleted.body.deletionId);
      expect((await api.create(tenant, 'logs')).status).toBe(409);
      const receipt = await completed(tenant, previousDeletion);
      expect(receipt).toMatchObject({
        state: 'COMPLETED',
        objectsDeleted: 1,
        generation: generations.at(-1),
      });
    }
    const last = await api.create(tenant, 'logs');
    const kept = await api.ingest(tenant, 'logs', [{ kept: true }]);
    const where = parseLocation(String(last.body.location));

    expect(generations).toEqual(Array.from({ length: ROUNDS }, (_, index) => index + 1));
    expect(last.body.generation).toBe(ROUNDS + 1);
    expect(locations.size).toBe(ROUNDS);
    expect(kept.status).toBe(201);
    expect([...(await listAll(target.s3, where.bucket, where.prefix)).keys()]).toEqual([
      kept.body.key,
    ]);
    for (const location of locations) {
      const old = parseLocation(location);
      expect((await listAll(target.s3, old.bucket, old.prefix)).size).toBe(0);
    }
  });

  it('never reuses a generation when creates race a re-create', async () => {
    const tenant = 'rebirth';
    await api.create(tenant, 'logs');
    const deleted = await api.delete(tenant, 'logs');
    await completed(tenant, String(deleted.body.deletionId));

    const replies = await Promise.all(Array.from({ length: 12 }, () => api.create(tenant, 'logs')));

    expect(replies.filter((reply) => reply.status === 201)).toHaveLength(1);
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(11);
    expect(new Set(replies.map((reply) => reply.body.generation))).toEqual(new Set([2]));
  });
});
