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
 * Invariant 8 with a key held in two versions, both in one DeleteObjects: each held version is
 * reported once, and every other version is counted as deleted (the receipt is exact).
 */
describe('a bucket with Object Lock, a key held in two versions', () => {
  const bucket = `lethe-locked2-${randomUUID().slice(0, 8)}`;
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

  it('fails with each held version once and counts every other version deleted', async () => {
    // Prepare: the first key gets a second version; both versions go under legal hold.
    const cell = await prepareCell(api, s3, 'locked', 12);
    const [held = ''] = [...(await listAll(s3, bucket, cell.location.prefix)).keys()].sort();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: held, Body: 'second version' }));
    const { Versions = [] } = await s3.send(
      new ListObjectVersionsCommand({ Bucket: bucket, Prefix: cell.location.prefix }),
    );
    const heldVersions = Versions.filter((entry) => entry.Key === held);
    for (const { VersionId } of heldVersions) {
      await s3.send(
        new PutObjectLegalHoldCommand({
          Bucket: bucket,
          Key: held,
          VersionId,
          LegalHold: { Status: 'ON' },
        }),
      );
    }

    // Act
    const deletionId = await requestDeletion(api, cell.tenant);
    const failed = await waitForEnd(api, cell.tenant, deletionId);

    // Assess
    expect(heldVersions).toHaveLength(2);
    expect(failed).toMatchObject({
      state: 'FAILED',
      failedObjects: 2,
      objectsDeleted: Versions.length - 2,
    });
    const failures = failed.failures as Array<{ key: string; versionId: string; code: string }>;
    expect(failures.map((failure) => failure.versionId).sort()).toEqual(
      heldVersions.map((entry) => entry.VersionId).sort(),
    );
    expect(
      failures.every((failure) => failure.key === held && failure.code === 'AccessDenied'),
    ).toBe(true);
    for (const { VersionId } of heldVersions) {
      await s3.send(
        new PutObjectLegalHoldCommand({
          Bucket: bucket,
          Key: held,
          VersionId,
          LegalHold: { Status: 'OFF' },
        }),
      );
    }
  });
});
