import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockOf, type DeletionReceipt } from '../../lib/core/index.ts';
import { RetentionRunner } from '../../lib/pipeline/index.ts';
import { policiesOf, seedDayPartitions, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Retention against a policy changed while a sweep runs: the sweep reads the streams with a
 * policy from the sweep index (eventually consistent, a page at a time) and claims each one's
 * run later. A policy removed or lengthened in between is not applied: the claim holds only while
 * the policy is still the number of days the cutoff was computed from.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('retention racing a change of policy', () => {
  let target: TestTarget;
  let api: ApiClient;
  const tenant = () => `q${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // No sweeps of its own: the tests drive the day's run on a fake clock.
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '5' }, sweepIntervalSeconds: 3600 });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const seeded = (name: string) => seedDayPartitions(api, target.s3, name);

  /**
   * A day's run over only this tenant's stream, from a fake clock on 2026-01-03 (a policy of 1
   * day would take dt=2026-01-01), with `change` made to the policy once the sweep index has
   * been read, or just before the request (which claims the day): the race a lagging index or a
   * long sweep opens.
   */
  async function raceRetention(
    name: string,
    change: () => Promise<void>,
    when: 'after the read' | 'before the request' = 'after the read',
  ) {
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const now = new Date('2026-01-03T06:00:00.000Z');
    const { streams, deletions } = storesOf(
      local,
      clockOf(() => now),
    );
    const racing = {
      async *withRetention() {
        for await (const stream of streams.withRetention()) {
          if (stream.tenant !== name) continue;
          expect(stream.retentionDays).toBe(1);
          if (when === 'after the read') await change();
          yield stream;
        }
      },
    };
    const requesting = {
      async requestPartitions(...args: Parameters<typeof deletions.requestPartitions>) {
        if (when === 'before the request') await change();
        return deletions.requestPartitions(...args);
      },
    };
    const racy = new RetentionRunner({
      streams: racing,
      deletions: requesting,
      clock: clockOf(() => now),
    });
    const report = await racy.run();
    const mine = ((await api.deletions(name)).body.deletions as DeletionReceipt[]).filter(
      (deletion) => deletion.partitionsBefore !== undefined,
    );
    return { report, mine, streams, deletions, now };
  }

  it('does not apply a retention policy removed after the sweep read it', async () => {
    // Arrange: a policy of 1 day
    const name = tenant();
    const { bucket, prefix } = await seeded(name);
    const set = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, { days: 1 });
    expect(set.status).toBe(200);

    // Act: the user removes it between the sweep's read and its claim
    const { report, mine } = await raceRetention(name, async () => {
      const removed = await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
      expect(removed.status).toBe(200);
    });

    // Assess: the request was refused, a skip: nothing requested, every object still there
    expect(report).toEqual({ policies: 1, claimed: 0, requested: 0 });
    expect(mine).toEqual([]);
    expect((await listAll(target.s3, bucket, prefix)).size).toBe(27);
    const stream = await api.get(name, 'logs');
    expect(stream.body).toMatchObject({ state: 'ACTIVE' });
    expect(stream.body.retentionDays).toBeUndefined();
    expect(stream.body.partitionDeletionId).toBeUndefined();
  });

  it('does not apply a retention policy removed just before the request that claims its day', async () => {
    // Arrange: a policy of 1 day
    const name = tenant();
    const { bucket, prefix } = await seeded(name);
    const set = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, { days: 1 });
    expect(set.status).toBe(200);

    // Act: the user removes it once the run has decided to run the day, before its request
    const { report, mine } = await raceRetention(
      name,
      async () => {
        const removed = await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
        expect(removed.status).toBe(200);
      },
      'before the request',
    );

    // Assess: the request (and its claim) refused: nothing requested, every object still there
    expect(report).toEqual({ policies: 1, claimed: 0, requested: 0 });
    expect(mine).toEqual([]);
    expect((await listAll(target.s3, bucket, prefix)).size).toBe(27);
    expect((await api.get(name, 'logs')).body.partitionDeletionId).toBeUndefined();
  });

  it('does not apply the old number of days of a policy lengthened after the sweep read it', async () => {
    // Arrange: a policy of 1 day
    const name = tenant();
    const { bucket, prefix } = await seeded(name);
    const set = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, { days: 1 });
    expect(set.status).toBe(200);

    // Act: the user lengthens it to 2 days between the sweep's read and its claim
    const { report, mine, streams, deletions, now } = await raceRetention(name, async () => {
      const longer = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, {
        days: 2,
      });
      expect(longer).toMatchObject({ status: 200, body: { retentionDays: 2 } });
    });

    // Assess: the request with 1 day was refused: nothing requested, every object still there
    expect(report).toEqual({ policies: 1, claimed: 0, requested: 0 });
    expect(mine).toEqual([]);
    expect((await listAll(target.s3, bucket, prefix)).size).toBe(27);

    // A later sweep reads the new policy and claims the day with it: before 2026-01-01, nothing.
    const later = await new RetentionRunner({
      streams: policiesOf(streams, name),
      deletions,
      clock: clockOf(() => now),
    }).run();
    expect(later).toMatchObject({ policies: 1, claimed: 1 });
    const requested = ((await api.deletions(name)).body.deletions as DeletionReceipt[]).filter(
      (deletion) => deletion.partitionsBefore !== undefined,
    );
    expect(requested.map((deletion) => deletion.partitionsBefore)).toEqual(['2026-01-01']);
    const receipt = await waitForEnd(api, name, requested[0]?.deletionId ?? '');
    expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: 0 });
    expect((await listAll(target.s3, bucket, prefix)).size).toBe(27);
    // No policy left behind for another test's sweep to find.
    await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
  });

  it('runs the day at a later sweep when a run died before its request (which claims the day)', async () => {
    // Arrange: a policy of 1 day, and a sweep on 2026-01-03 that dies just before it requests
    // the day's deletion (kill -9 there: nothing after it runs; before, it had claimed the day)
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const name = tenant();
    await seeded(name);
    const set = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, { days: 1 });
    expect(set.status).toBe(200);
    const now = new Date('2026-01-03T06:00:00.000Z');
    const { streams, deletions } = storesOf(
      local,
      clockOf(() => now),
    );
    const dying = {
      requestPartitions: async () => {
        throw new Error('killed before the request');
      },
    };
    const run = (store: Pick<typeof deletions, 'requestPartitions'>) =>
      new RetentionRunner({
        streams: policiesOf(streams, name),
        deletions: store,
        clock: clockOf(() => now),
      }).run();
    // Its stream's run fails on its own (the sweep goes on with others and fails at its end).
    expect(await run(dying)).toMatchObject({ claimed: 0, requested: 0, errors: 1 });

    // Act: the next sweep, the same day
    const later = await run(deletions);

    // Assess: the day's deletion is requested then, once (before: not until the next day)
    expect(later).toMatchObject({ policies: 1, requested: 1 });
    const requested = ((await api.deletions(name)).body.deletions as DeletionReceipt[]).filter(
      (deletion) => deletion.partitionsBefore !== undefined,
    );
    expect(requested.map((deletion) => deletion.partitionsBefore)).toEqual(['2026-01-02']);
    expect(await run(deletions)).toMatchObject({ policies: 1, requested: 0 });
    await waitForEnd(api, name, requested[0]?.deletionId ?? '');
    await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
  });
});
