import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetStore } from '../../lib/store/index.ts';
import { apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * The bucket's key budget (`LETHE_MAX_KEYS_PER_SECOND`): admissions are counted exactly across
 * concurrent workers, and a deletion held to a budget far below its pace still completes with
 * an exact receipt. How closely the rate holds is measured by `npm run bench`, not here.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('key budget', () => {
  let target: TestTarget;
  beforeAll(async () => {
    target = await startTarget({
      settings: { LETHE_MAX_KEYS_PER_SECOND: '150', LETHE_PAGE_SIZE: '50' },
    });
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('admits exactly the burst from 20 concurrent admissions at one instant, and tells the rest how long to wait', async () => {
    // Prepare
    if (!target.local) throw new Error('needs the in-process local stack');
    const budgets = new BudgetStore({ table: storesOf(target.local).table });
    const bucket = `budget-${randomUUID().slice(0, 8)}`;
    const now = Date.now();

    // Act: 100 keys each at 1,000 keys/s, a burst of 1,000 keys
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => budgets.admit(bucket, 100, 1000, 1000, now)),
    );

    // Assess
    const admitted = answers.filter((answer) => answer.admitted);
    expect(admitted).toHaveLength(10);
    for (const refused of answers.filter((answer) => !answer.admitted)) {
      expect(refused.waitMs).toBeGreaterThan(0);
    }
    // Later, the budget has room again, for exactly the time that passed.
    expect(await budgets.admit(bucket, 100, 1000, 1000, now + 100)).toEqual({
      admitted: true,
      waitMs: 0,
    });
    expect((await budgets.admit(bucket, 100, 1000, 1000, now + 100)).admitted).toBe(false);
    // Keys given back make room at once.
    await budgets.refund(bucket, 100, 1000);
    expect((await budgets.admit(bucket, 100, 1000, 1000, now + 100)).admitted).toBe(true);
  });

  it('completes a deletion held to 150 keys a second (pages deferred through the queue) with an exact receipt', async () => {
    // Prepare: 600 objects in 4 partitions, pages of 50: four seconds of budget at least
    const api = apiClient(target.baseUrl);
    const tenant = `b${randomUUID().slice(0, 8)}`;
    const created = await api.create(tenant, 'logs');
    const where = parseLocation(String(created.body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 600, 4));

    // Act
    const deletion = await api.delete(tenant, 'logs');
    const done = await waitFor(
      'the deletion to complete',
      async () => {
        const { body } = await api.deletion(tenant, String(deletion.body.deletionId));
        return body.state === 'COMPLETED' ? body : undefined;
      },
      180_000,
    );

    // Assess
    expect(done).toMatchObject({ state: 'COMPLETED', objectsDeleted: 600 });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
  });
});
