import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForEnd } from '../helpers/cells.ts';
import { apiClient, parseLocation } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/** A new tenant's stream `logs` of ten objects in one partition, and the stack's stream store. */
async function tenObjects(target: TestTarget) {
  const api = apiClient(target.baseUrl);
  const tenant = `t${Date.now().toString(36)}`;
  const created = await api.create(tenant, 'logs');
  const where = parseLocation(String(created.body.location));
  await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 10, 1));
  if (!target.local) throw new Error('needs the in-process local stack');
  return { api, tenant, where, streams: storesOf(target.local).streams };
}

/**
 * Waiting for an ingest in flight is progress: a deletion whose verification waits out an
 * ingest grace longer than the stale threshold times the attempts allowed is alive, and ends
 * COMPLETED once the grace is over, not FAILED (Stalled) while it only waits.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)(
  'a deletion waiting for an ingest in flight',
  () => {
    let target: TestTarget;
    beforeAll(async () => {
      target = await startTarget({
        settings: {
          LETHE_STALE_AFTER_SECONDS: '3',
          LETHE_MAX_ATTEMPTS: '2',
          LETHE_INGEST_GRACE_SECONDS: '20',
        },
      });
    });
    afterAll(async () => {
      await target?.stop();
    });

    it('completes once the grace is over, though it waits longer than 3 s x 2 attempts', async () => {
      // Prepare: a writer admitted before the tombstone that never reports back (it died).
      const { api, tenant, where, streams } = await tenObjects(target);
      await streams.admitIngest(tenant, 'logs');

      // Act
      const deletion = await api.delete(tenant, 'logs');
      const ended = await waitForEnd(api, tenant, String(deletion.body.deletionId), 120_000);

      // Assess
      expect(ended).toMatchObject({ state: 'COMPLETED', objectsDeleted: 10 });
      expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
    }, 180_000);
  },
);

/**
 * An ingest whose write the api gave up on (a timeout, the deadline's abort, a lost answer):
 * S3 may still store its object after the api answered, so a deletion requested meanwhile waits
 * the grace for it as for one in flight, and deletes it when it lands.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)(
  'a deletion after an ingest whose write failed',
  () => {
    const GRACE_SECONDS = 5;
    let target: TestTarget;
    beforeAll(async () => {
      target = await startTarget({
        settings: { LETHE_INGEST_GRACE_SECONDS: String(GRACE_SECONDS) },
      });
    });
    afterAll(async () => {
      await target?.stop();
    });

    it('waits out the grace and deletes the object S3 stored after the write failed', async () => {
      // Prepare: ten objects, and an ingest admitted whose write failed, as the api ends one.
      const { api, tenant, where, streams } = await tenObjects(target);
      const admitted = await streams.admitIngest(tenant, 'logs');
      await streams.abandonIngest(admitted);

      // Act: the deletion, then S3 stores the failed write's object a second later.
      const deletion = await api.delete(tenant, 'logs');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const late = { key: `${where.prefix}dt=2026-01-01/late.json`, body: '[{"late":true}]' };
      await seedObjects(target.s3, where.bucket, [late]);
      const ended = await waitForEnd(api, tenant, String(deletion.body.deletionId), 120_000);

      // Assess: verified no sooner than the grace after the admission, the late object counted.
      expect(ended).toMatchObject({ state: 'COMPLETED', objectsDeleted: 11 });
      const waited =
        Date.parse(String(ended.completedAt)) - Date.parse(String(admitted.lastIngestAt));
      expect(waited).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);
      expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
    }, 180_000);
  },
);
