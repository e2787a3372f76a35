import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForEnd } from '../helpers/cells.ts';
import { apiClient, parseLocation } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Throttling is retried, never a failure (invariant 8): a deletion whose pages wait on the
 * bucket's key budget far longer than the stale threshold, with few attempts allowed, is alive
 * and not Stalled. Its pages come back within the heartbeat interval and mark it so.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('a deletion held back by the key budget', () => {
  let target: TestTarget;
  beforeAll(async () => {
    target = await startTarget({
      settings: {
        LETHE_MAX_KEYS_PER_SECOND: '1',
        LETHE_PAGE_SIZE: '20',
        LETHE_STALE_AFTER_SECONDS: '5',
        LETHE_MAX_ATTEMPTS: '3',
      },
    });
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('completes with every object counted, though each page waits 20 s for the budget', async () => {
    // Prepare: 100 objects, pages of 20 at 1 key a second: each page waits four stale thresholds
    const api = apiClient(target.baseUrl);
    const tenant = `t${Date.now().toString(36)}`;
    const created = await api.create(tenant, 'logs');
    const where = parseLocation(String(created.body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 100, 1));

    // Act
    const deletion = await api.delete(tenant, 'logs');
    const ended = await waitForEnd(api, tenant, String(deletion.body.deletionId), 400_000);

    // Assess
    expect(ended).toMatchObject({ state: 'COMPLETED', objectsDeleted: 100 });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
  }, 420_000);
});
