import { randomUUID } from 'node:crypto';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockOf, type DeletionReceipt, dayOf } from '../../lib/core/index.ts';
import { RetentionRunner } from '../../lib/pipeline/index.ts';
import { seedDayPartitions, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { listAll, seedObjects } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Partition deletion and retention, end to end: old `dt=` partitions go while the stream stays
 * ACTIVE and writable; nothing on or after the cutoff, and nothing outside `dt=`, is touched.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('partitions and retention', () => {
  let target: TestTarget;
  let api: ApiClient;
  const tenant = () => `r${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // No sweeps of its own: the retention test drives the day's runs on a fake clock.
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '5' }, sweepIntervalSeconds: 3600 });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const seeded = (name: string) => seedDayPartitions(api, target.s3, name);

  it('deletes the partitions strictly before the cutoff, and nothing else, while ingest goes on', async () => {
    // Arrange: beside the day partitions, partitions whose names have a day's shape but are
    // not days (month 13, day 00, 30 February): in no day's partition, so never touched
    const name = tenant();
    const { bucket, prefix } = await seeded(name);
    const notDays = ['dt=2025-13-45/x.json', 'dt=0000-00-00/y.json', 'dt=2025-02-30/w.json'];
    await seedObjects(
      target.s3,
      bucket,
      notDays.map((key) => ({ key: `${prefix}${key}`, body: '{}' })),
    );

    // Act: the deletion, with ingests racing it
    const reply = await api.call<DeletionReceipt>(
      'DELETE',
      `/v1/tenants/${name}/streams/logs/partitions?before=2026-01-03`,
    );
    const ingests = await Promise.all(
      Array.from({ length: 5 }, (_, n) => api.ingest(name, 'logs', [{ n }])),
    );
    const receipt = await waitForEnd(api, name, reply.body.deletionId);

    // Assess
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ partitionsBefore: '2026-01-03', state: 'PENDING' });
    expect(ingests.map((ingest) => ingest.status)).toEqual([201, 201, 201, 201, 201]);
    expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: 12 });
    const left = [...(await listAll(target.s3, bucket, prefix)).keys()].map((key) =>
      key.slice(prefix.length),
    );
    expect(left.filter((key) => /^dt=2026-01-0[12]\//.test(key))).toEqual([]);
    expect(left.filter((key) => /^dt=2026-01-0[34]\//.test(key))).toHaveLength(12);
    expect(left).toEqual(
      expect.arrayContaining(['manifest.json', 'schema/v1.json', 'dt=bogus/x.json', ...notDays]),
    );
    const today = `dt=${dayOf(new Date())}/`;
    expect(left.filter((key) => key.startsWith(today))).toHaveLength(5);
    const stream = await api.get(name, 'logs');
    expect(stream.body).toMatchObject({ state: 'ACTIVE', generation: 1 });
    expect(stream.body.partitionDeletionId).toBeUndefined();
    // Its certificate claims the partitions it verified, not the stream that stays.
    const signed = await api.call<{ certificate: Record<string, unknown> }>(
      'GET',
      `/v1/tenants/${name}/deletions/${reply.body.deletionId}/certificate`,
    );
    expect(signed.status).toBe(200);
    expect(signed.body.certificate).toMatchObject({
      partitionsBefore: '2026-01-03',
      objectsDeleted: 12,
      verified: expect.stringContaining('dt= partitions of days before 2026-01-03'),
    });
  });

  it('makes a deletion of the whole stream wait for its partition deletion: each object counted once', async () => {
    // Arrange: 24 objects in the partitions and 3 beside them
    const name = tenant();
    const { bucket, prefix } = await seeded(name);

    // Act: the whole stream asked for while the partitions' deletion has only just begun
    const partitions = await api.call<DeletionReceipt>(
      'DELETE',
      `/v1/tenants/${name}/streams/logs/partitions?before=2026-01-03`,
    );
    const refused = await api.delete(name, 'logs');
    const first = await waitForEnd(api, name, partitions.body.deletionId);
    const whole = await api.delete(name, 'logs');
    const second = await waitForEnd(api, name, String(whole.body.deletionId));

    // Assess: refused with when to ask again; then the rest, so the two receipts sum to 27
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'PartitionDeletionInProgress' } });
    expect(refused.body.error).toMatchObject({
      message: expect.stringContaining(partitions.body.deletionId),
    });
    expect(refused.headers.get('Retry-After')).toBe('30');
    expect(first).toMatchObject({ state: 'COMPLETED', objectsDeleted: 12 });
    expect(whole.status).toBe(202);
    expect(second).toMatchObject({ state: 'COMPLETED', objectsDeleted: 15 });
    expect((await listAll(target.s3, bucket, prefix)).size).toBe(0);
  });

  it('aborts the uploads in progress in its partitions, and only those', async () => {
    // Arrange: an upload in a partition to delete, one in a partition to keep
    const name = tenant();
    const { bucket, prefix } = await seeded(name);
    for (const day of ['2026-01-01', '2026-01-04']) {
      await target.s3.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}dt=${day}/part.bin` }),
      );
    }

    // Act
    const reply = await api.call<DeletionReceipt>(
      'DELETE',
      `/v1/tenants/${name}/streams/logs/partitions?before=2026-01-03`,
    );
    const receipt = await waitForEnd(api, name, reply.body.deletionId);

    // Assess
    expect(receipt).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: 12,
      multipartUploadsAborted: 1,
    });
    const { Uploads = [] } = await target.s3.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }),
    );
    expect(Uploads.map((upload) => upload.Key)).toEqual([`${prefix}dt=2026-01-04/part.bin`]);
  });

  it('refuses a cutoff after today, and one that is not a day', async () => {
    const name = tenant();
    await api.create(name, 'logs');

    const late = await api.call(
      'DELETE',
      `/v1/tenants/${name}/streams/logs/partitions?before=2999-01-01`,
    );
    const bogus = await api.call(
      'DELETE',
      `/v1/tenants/${name}/streams/logs/partitions?before=yesterday`,
    );

    for (const reply of [late, bogus]) {
      expect(reply).toMatchObject({ status: 400, body: { error: { code: 'InvalidCutoff' } } });
    }
  });

  it('runs retention once a day per stream, however many sweeps overlap, over several days', async () => {
    // Arrange: a policy of 1 day, and a fake clock that starts on 2026-01-03
    const name = tenant();
    const { bucket, prefix } = await seeded(name);
    const set = await api.call('PUT', `/v1/tenants/${name}/streams/logs/retention`, { days: 1 });
    expect(set).toMatchObject({ status: 200, body: { retentionDays: 1 } });
    let now = new Date('2026-01-03T06:00:00.000Z');
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const { streams, deletions } = storesOf(
      local,
      clockOf(() => now),
    );
    const runner = () => new RetentionRunner({ streams, deletions, clock: clockOf(() => now) });
    const mine = async () =>
      ((await api.deletions(name)).body.deletions as DeletionReceipt[]).filter(
        (deletion) => deletion.partitionsBefore !== undefined,
      );

    // Act + Assess, day by day: three overlapping runs, one deletion
    const day = async (iso: string, before: string) => {
      now = new Date(iso);
      const reports = await Promise.all([runner().run(), runner().run(), runner().run()]);
      expect(reports.reduce((sum, report) => sum + report.claimed, 0)).toBe(1);
      const requested = (await mine()).filter((deletion) => deletion.partitionsBefore === before);
      expect(requested).toHaveLength(1);
      await waitForEnd(api, name, requested[0]?.deletionId ?? '');
      // A sweep later the same day claims nothing.
      expect((await runner().run()).claimed).toBe(0);
    };
    await day('2026-01-03T06:00:00.000Z', '2026-01-02');
    await day('2026-01-04T00:00:01.000Z', '2026-01-03');
    await day('2026-01-05T23:59:59.000Z', '2026-01-04');

    // Three days, three deletions; every partition before the last cutoff is gone.
    expect(await mine()).toHaveLength(3);
    const left = [...(await listAll(target.s3, bucket, prefix)).keys()];
    expect(left.filter((key) => key.includes('dt=2026-01-0'))).toEqual(
      expect.arrayContaining([expect.stringContaining('dt=2026-01-04/')]),
    );
    expect(left.filter((key) => /dt=2026-01-0[123]\//.test(key))).toEqual([]);

    // The policy can be removed: no more runs.
    const removed = await api.call('DELETE', `/v1/tenants/${name}/streams/logs/retention`);
    expect(removed.status).toBe(200);
    expect(removed.body.retentionDays).toBeUndefined();
    now = new Date('2026-01-06T06:00:00.000Z');
    const after = await runner().run();
    expect(after.claimed).toBe(0);
  });
});
