import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockOf, type DeletionReceipt } from '../../lib/core/index.ts';
import { RetentionRunner } from '../../lib/pipeline/index.ts';
import { policiesOf, requestDeletion, seedDayPartitions, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * A retention policy changed on a day its run was claimed already: the README promises that
 * "a later sweep applies the new one" (and the design: first at the next sweep), the same day,
 * not the day after. A policy set again unchanged does not run the day twice.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('retention changed after the day was run', () => {
  let target: TestTarget;
  let api: ApiClient;
  const tenant = () => `r${randomUUID().slice(0, 8)}`;
  /** 2026-01-03: a policy of 2 days takes nothing (before 2026-01-01), 1 day dt=2026-01-01. */
  const now = new Date('2026-01-03T06:00:00.000Z');

  beforeAll(async () => {
    // No sweeps of its own: the tests drive the day's runs on a fake clock.
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '5' }, sweepIntervalSeconds: 3600 });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  /** One sweep's retention run over only `name`'s streams, at `now`. */
  async function sweep(name: string) {
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const { streams, deletions } = storesOf(
      local,
      clockOf(() => now),
    );
    return new RetentionRunner({
      streams: policiesOf(streams, name),
      deletions,
      clock: clockOf(() => now),
    }).run();
  }

  const partitionDeletions = async (name: string) =>
    ((await api.deletions(name)).body.deletions as DeletionReceipt[]).filter(
      (deletion) => deletion.partitionsBefore !== undefined,
    );

  const setPolicy = async (name: string, days: number) => {
    const set = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, { days });
    expect(set).toMatchObject({ status: 200, body: { retentionDays: days } });
  };

  it('applies a policy shortened after the day was run at the next sweep, the same day', async () => {
    // Arrange: a policy of 2 days, run today (nothing is that old)
    const name = tenant();
    const { bucket, prefix } = await seedDayPartitions(api, target.s3, name);
    await setPolicy(name, 2);
    expect(await sweep(name)).toEqual({ policies: 1, claimed: 1, requested: 1 });
    const first = await partitionDeletions(name);
    expect(first.map((deletion) => deletion.partitionsBefore)).toEqual(['2026-01-01']);
    expect(await waitForEnd(api, name, first[0]?.deletionId ?? '')).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: 0,
    });

    // Act: the user shortens it to 1 day; the next sweep runs the same day
    await setPolicy(name, 1);
    const report = await sweep(name);

    // Assess: the new policy was applied: dt=2026-01-01 (6 objects) is gone, nothing else
    expect(report).toEqual({ policies: 1, claimed: 1, requested: 1 });
    const requested = await partitionDeletions(name);
    expect(requested.map((deletion) => deletion.partitionsBefore).sort()).toEqual([
      '2026-01-01',
      '2026-01-02',
    ]);
    const second = requested.find((deletion) => deletion.partitionsBefore === '2026-01-02');
    expect(await waitForEnd(api, name, second?.deletionId ?? '')).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: 6,
    });
    const left = await listAll(target.s3, bucket, prefix);
    expect(left.size).toBe(21);
    expect([...left.keys()].some((key) => key.includes('dt=2026-01-01/'))).toBe(false);
    await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
  });

  it('does not run the day again for a policy set again to the same number of days', async () => {
    // Arrange: a policy of 1 day, run today
    const name = tenant();
    await seedDayPartitions(api, target.s3, name);
    await setPolicy(name, 1);
    expect(await sweep(name)).toEqual({ policies: 1, claimed: 1, requested: 1 });

    // Act: the same policy is put again, and a sweep runs the same day
    await setPolicy(name, 1);
    const report = await sweep(name);

    // Assess: the day stays run: no second claim, one partition deletion in all
    expect(report).toEqual({ policies: 1, claimed: 0, requested: 0 });
    expect(await partitionDeletions(name)).toHaveLength(1);
    await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
  });

  it('counts no policy of a stream that was deleted (its policy went with it)', async () => {
    // Arrange: a stream with a policy, deleted
    const name = tenant();
    await seedDayPartitions(api, target.s3, name);
    await setPolicy(name, 1);
    const deletionId = await requestDeletion(api, name);
    expect(await waitForEnd(api, name, deletionId)).toMatchObject({ state: 'COMPLETED' });
    expect((await api.get(name, 'logs')).status).toBe(404);

    // Act: a sweep's retention run
    const report = await sweep(name);

    // Assess: no stream with a policy is left to count, as GET of it says (404)
    expect(report).toEqual({ policies: 0, claimed: 0, requested: 0 });
  });
});
