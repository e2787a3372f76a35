import { randomUUID } from 'node:crypto';
import {
  CreateBucketCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Invariant 8 with real Object Lock (moto implements legal holds): in a bucket that keeps
 * versions, Lethe deletes every version; held versions end the deletion FAILED with their keys
 * and codes, and once released a retry completes it.
 */
describe('a bucket with Object Lock', () => {
  const bucket = `lethe-locked-${randomUUID().slice(0, 8)}`;
  const s3 = new S3Client({ forcePathStyle: true });
  let target: TestTarget;
  let api: ApiClient;
  beforeAll(async () => {
    await s3.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
    target = await startTarget({
      stackProps: { bucketName: bucket },
      settings: { LETHE_PAGE_SIZE: '7', LETHE_STALE_AFTER_SECONDS: '3', LETHE_MAX_ATTEMPTS: '50' },
      visibilityTimeoutSeconds: 3,
    });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const versionsUnder = async (prefix: string) => {
    const { Versions = [], DeleteMarkers = [] } = await s3.send(
      new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix }),
    );
    return { versions: Versions, markers: DeleteMarkers };
  };

  it('fails on legal holds with the held versions, then completes after release and retry', async () => {
    // Prepare: 30 objects (+1 ingested), one overwritten (two versions), two under legal hold.
    const cell = await prepareCell(api, s3, 'locked', 30);
    const keys = [...(await listAll(s3, bucket, cell.location.prefix)).keys()].sort();
    const [held1 = '', held2 = '', overwritten = ''] = keys;
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: overwritten, Body: 'second version' }),
    );
    for (const Key of [held1, held2]) {
      await s3.send(
        new PutObjectLegalHoldCommand({ Bucket: bucket, Key, LegalHold: { Status: 'ON' } }),
      );
    }
    const before = await versionsUnder(cell.location.prefix);
    const versions = before.versions.length;

    // Act
    const deletionId = await requestDeletion(api, cell.tenant);
    const failed = await waitForEnd(api, cell.tenant, deletionId);
    for (const Key of [held1, held2]) {
      await s3.send(
        new PutObjectLegalHoldCommand({ Bucket: bucket, Key, LegalHold: { Status: 'OFF' } }),
      );
    }
    const retry = await api.call(
      'POST',
      `/v1/tenants/${cell.tenant}/deletions/${deletionId}/retry`,
    );
    const completed = await waitForEnd(api, cell.tenant, deletionId);

    // Assess
    expect(versions).toBe(cell.objects + 1);
    expect(failed).toMatchObject({
      state: 'FAILED',
      failedObjects: 2,
      objectsDeleted: versions - 2,
    });
    const failures = failed.failures as Array<{ key: string; versionId: string; code: string }>;
    expect(failures.map((failure) => failure.key).sort()).toEqual([held1, held2].sort());
    expect(failures.every((failure) => failure.code === 'AccessDenied' && failure.versionId)).toBe(
      true,
    );
    expect(retry.status).toBe(202);
    expect(completed).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: versions,
      bytesDeleted: expect.any(Number),
    });
    expect(await versionsUnder(cell.location.prefix)).toEqual({ versions: [], markers: [] });
    for (const neighbour of cell.neighbours) {
      expect(await listAll(s3, neighbour.where.bucket, neighbour.where.prefix)).toEqual(
        neighbour.objects,
      );
    }
  });
});
