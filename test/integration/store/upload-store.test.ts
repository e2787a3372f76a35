import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FailureStore, UploadStore } from '../../../lib/store/index.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

/** The uploads a deletion aborted, and its mark, against the emulator's DynamoDB. */
describe.skipIf(process.env.LETHE_TEST_API_URL)('UploadStore records and counts', () => {
  let target: TestTarget;
  let stores: ReturnType<typeof storesOf>;
  let uploads: UploadStore;
  const tenant = () => `t${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
    uploads = new UploadStore({ table: stores.table });
  });
  afterAll(async () => {
    await target?.stop();
  });

  async function aDeletion() {
    const name = tenant();
    await stores.streams.create(name, 'logs');
    return (await stores.deletions.request(name, 'logs', 3600)).deletion;
  }

  it('counts none without a query for a deletion that never recorded an upload', async () => {
    // Arrange
    const deletion = await aDeletion();
    const count = vi.spyOn(stores.table, 'count');

    // Act
    const counted = await uploads.count(deletion);

    // Assess
    expect(counted).toBe(0);
    expect(count).not.toHaveBeenCalled();
    count.mockRestore();
  });

  it('marks the deletion before its uploads are written, and counts each upload once', async () => {
    // Arrange
    const deletion = await aDeletion();
    const aborted = [
      { key: `${deletion.prefix}dt=2026-11-01/a.json`, uploadId: 'u1' },
      { key: `${deletion.prefix}b.json`, uploadId: 'u2' },
    ];

    // Act: a repeated finalize records the same uploads again
    await uploads.record(deletion, aborted);
    await uploads.aborted(deletion, aborted);
    await uploads.record(deletion, aborted);
    const read = await stores.deletions.get(deletion.tenant, deletion.deletionId);

    // Assess
    expect(read?.uploadsRecorded).toBe(true);
    expect(await uploads.count(read ?? deletion)).toBe(2);
    // The deletion as read before the mark counts none: the finalizer passes the mark on.
    expect(await uploads.count(deletion)).toBe(0);
  });

  it('counts only the uploads an abort took, not one recorded that completed before its abort', async () => {
    // Arrange
    const deletion = await aDeletion();
    const completed = { key: `${deletion.prefix}a.bin`, uploadId: 'u1' };
    const taken = { key: `${deletion.prefix}b.bin`, uploadId: 'u2' };

    // Act
    await uploads.record(deletion, [completed, taken]);
    await uploads.aborted(deletion, [taken]);

    // Assess
    expect(await uploads.count({ ...deletion, uploadsRecorded: true })).toBe(1);
  });

  it('marks no deletion that does not exist', async () => {
    // Arrange
    const name = tenant();
    const deletionId = randomUUID();

    // Act
    await uploads.record({ tenant: name, deletionId }, [{ key: 'k', uploadId: 'u' }]);

    // Assess
    expect(await stores.deletions.get(name, deletionId)).toBeUndefined();
  });

  it('records uploads and failures of keys as long as S3 allows, each once', async () => {
    // Arrange: keys of 1,024 bytes (S3's longest) and a long upload id, past a sort key's limit
    const deletion = await aDeletion();
    const longest = (tail: string) =>
      `${deletion.prefix}${'k'.repeat(1024 - deletion.prefix.length - tail.length)}${tail}`;
    const aborted = [
      { key: longest('a'), uploadId: 'u'.repeat(200) },
      { key: longest('b'), uploadId: 'u'.repeat(200) },
    ];
    const failed = [
      { key: longest('a'), code: 'AccessDenied', message: 'Access Denied' },
      {
        key: longest('b'),
        versionId: 'v'.repeat(200),
        code: 'AccessDenied',
        message: 'Access Denied',
      },
    ];
    const failures = new FailureStore({ table: stores.table });

    // Act: twice, as a repeated finalize and a repeated page would
    for (let n = 0; n < 2; n++) {
      await uploads.record(deletion, aborted);
      await uploads.aborted(deletion, aborted);
      await failures.record(deletion, failed);
    }
    const read = await stores.deletions.get(deletion.tenant, deletion.deletionId);

    // Assess
    expect(await uploads.count(read ?? deletion)).toBe(2);
    expect(await failures.list({ ...deletion, failedObjects: 2 })).toEqual(
      expect.arrayContaining(failed),
    );
    expect(await failures.list({ ...deletion, failedObjects: 2 })).toHaveLength(2);
  });
});
