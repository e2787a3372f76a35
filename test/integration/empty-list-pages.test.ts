import { randomUUID } from 'node:crypto';
import {
  CreateBucketCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandInput,
  PutBucketVersioningCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulators, startEmulators } from '../../lib/local/emulator.ts';
import { assertCellCompleted, prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { apiClient } from '../helpers/http.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * S3 may answer a list page with no keys and IsTruncated true, many in a row (behind delete
 * markers). Here every listing answers 20 such pages before each real one (the launcher's
 * fault mode s3-empty-truncated-pages): a deletion's chains go on past them, end, and delete
 * everything, in a plain bucket and in a versioned one.
 */
const EMPTY_PAGES = 20;

/** Every version and delete marker under a prefix, following S3's markers past empty pages. */
async function versionsUnder(s3: S3Client, bucket: string, prefix: string) {
  const keys: string[] = [];
  let markers: Pick<ListObjectVersionsCommandInput, 'KeyMarker' | 'VersionIdMarker'> = {};
  for (;;) {
    const page = await s3.send(
      new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, ...markers }),
    );
    for (const entry of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]) {
      keys.push(entry.Key ?? '');
    }
    if (!page.IsTruncated) return keys;
    markers = { KeyMarker: page.NextKeyMarker, VersionIdMarker: page.NextVersionIdMarker };
  }
}

describe('a deletion over empty truncated list pages', () => {
  let emulators: Emulators;
  beforeAll(async () => {
    emulators = await startEmulators({ faults: { 's3-empty-truncated-pages': EMPTY_PAGES } });
  });
  afterAll(async () => {
    await emulators?.stop();
  });

  describe.each([
    { bucket: 'plain', versioned: false },
    { bucket: 'versioned', versioned: true },
  ])('in a $bucket bucket', ({ versioned }) => {
    let target: TestTarget;
    beforeAll(async () => {
      const endpoints = { endpoint: emulators.main.endpoint, s3Endpoint: emulators.s3.endpoint };
      let stackProps = {};
      if (versioned) {
        // A bucket of its own, versioned before the stack starts (the stack then asks S3).
        const s3 = new S3Client({ forcePathStyle: true, endpoint: emulators.s3.endpoint });
        const bucketName = `lethe-empty-pages-${randomUUID().slice(0, 8)}`;
        await s3.send(new CreateBucketCommand({ Bucket: bucketName }));
        await s3.send(
          new PutBucketVersioningCommand({
            Bucket: bucketName,
            VersioningConfiguration: { Status: 'Enabled' },
          }),
        );
        stackProps = { bucketName };
      }
      target = await startTarget({ ...endpoints, stackProps, settings: { LETHE_PAGE_SIZE: '7' } });
    });
    afterAll(async () => {
      await target?.stop();
    });

    it('ends every chain and deletes everything, with exact counts', async () => {
      // Prepare: 20 objects over three partitions and an ingested batch, pages of 7.
      const api = apiClient(target.baseUrl);
      const cell = await prepareCell(api, target.s3, `e${randomUUID().slice(0, 8)}`, 20);

      const { bucket, prefix } = cell.location;
      const first = await target.s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }),
      );
      expect(first).toMatchObject({ KeyCount: 0, IsTruncated: true });

      // Act
      const deletionId = await requestDeletion(api, cell.tenant);
      const receipt = await waitForEnd(api, cell.tenant, deletionId);

      // Assess
      await assertCellCompleted(api, target.s3, cell, receipt);
      expect(await versionsUnder(target.s3, bucket, prefix)).toEqual([]);
    });
  });
});
