import { randomUUID } from 'node:crypto';
import {
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { armFailpoint, disarmFailpoints, firedCount } from '../../lib/support/index.ts';
import { type Cell, prepareCell, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient, parseLocation } from '../helpers/http.ts';
import { listAll, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Nothing left behind (multipart uploads in progress, keys of every shape, a bucket whose
 * versioning is switched on under Lethe), with exact counts in the receipt.
 */
describe('nothing left behind', () => {
  let target: TestTarget;
  let api: ApiClient;
  const tenant = () => `c${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // Small pages: the awkward keys land on pages of their own and among others.
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '7' } });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const deleteAndWait = async (cell: Pick<Cell, 'tenant'>) => {
    const reply = await api.delete(cell.tenant, 'logs');
    expect(reply.status).toBe(202);
    return waitForEnd(api, cell.tenant, String(reply.body.deletionId));
  };

  const uploadsUnder = async (bucket: string, prefix: string) =>
    (await target.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix })))
      .Uploads ?? [];

  it('aborts every multipart upload in progress under the location, counts them, and leaves none', async () => {
    // Arrange: two uploads in progress (one with a part written) beside the objects, and one
    // under a neighbour, which must survive.
    const cell = await prepareCell(api, target.s3, tenant(), 9);
    const { bucket, prefix } = cell.location;
    for (const key of [`${prefix}dt=2026-01-01/big.parquet`, `${prefix}pending.bin`]) {
      const { UploadId } = await target.s3.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }),
      );
      if (key.endsWith('.parquet')) {
        await target.s3.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: 'x' }),
        );
      }
    }
    const neighbour = cell.neighbours[0]?.where ?? cell.location;
    await target.s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${neighbour.prefix}keep.bin` }),
    );

    // Act
    const receipt = await deleteAndWait(cell);

    // Assess
    expect(receipt).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: cell.objects,
      multipartUploadsAborted: 2,
    });
    expect(await uploadsUnder(bucket, prefix)).toEqual([]);
    expect(await uploadsUnder(bucket, neighbour.prefix)).toHaveLength(1);
  });

  it('deletes keys of every shape a user may write, each counted once', async () => {
    // Arrange
    const cell = await prepareCell(api, target.s3, tenant(), 0);
    const { bucket, prefix } = cell.location;
    // Not here: a key with a line feed, which S3 accepts but the emulator's PUT cannot take.
    const awkward = [
      'with space.json',
      'dt=2026-01-01/ünïcødé-日本語-😀.json',
      'dt=2026-01-01/xml <&> "quotes" \'apos\'.json',
      'dt=2026-01-01/plus+and%25percent%.json',
      'dt=2026-01-01/tab\there.json',
      'dt=2026-01-01/control-\u0001-char.json',
      `dt=2026-01-01/${'l'.repeat(900)}.json`,
      `${Array.from({ length: 60 }, (_, depth) => `d${depth}`).join('/')}/deep.json`,
      'trailing-dot.',
      'dt=2026-01-01/./dot-segment.json',
      'dt=2026-01-01//double-slash.json',
      'top-level.json',
    ];
    await seedObjects(
      target.s3,
      bucket,
      awkward.map((key) => ({ key: `${prefix}${key}`, body: key })),
    );
    const before = await listAll(target.s3, bucket, prefix);
    expect(before.size).toBe(cell.objects + awkward.length);

    // Act
    const receipt = await deleteAndWait(cell);

    // Assess
    expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: before.size });
    expect(receipt.failures).toBeUndefined();
    expect((await listAll(target.s3, bucket, prefix)).size).toBe(0);
    for (const { where, objects } of cell.neighbours) {
      expect(await listAll(target.s3, where.bucket, where.prefix)).toEqual(objects);
    }
  });

  it.each([
    { resumed: 'no page', failures: 0 },
    { resumed: 'pages whose deletes laid markers', failures: 3 },
  ])(
    "counts exactly when the stack's own bucket turns versioned under Lethe, $resumed resumed",
    async ({ failures }) => {
      // Arrange: a stack of its own, whose bucket it created unversioned (so it never asks per
      // deletion), switched to versioning after the objects were written: 60 objects, then a
      // second version of 30 of them, then a delete marker over 12 of those. With failures, the
      // first pages fail after their delete and before their count: each is listed again, its
      // keys hidden by the markers its delete laid.
      const own = await startTarget({ settings: { LETHE_PAGE_SIZE: '25' } });
      try {
        const ownApi = apiClient(own.baseUrl);
        const name = tenant();
        const created = await ownApi.create(name, 'logs');
        const { bucket, prefix } = parseLocation(String(created.body.location));
        const keys = Array.from(
          { length: 60 },
          (_, n) => `${prefix}dt=2026-01-0${n % 3}/k${n}.json`,
        );
        await seedObjects(
          own.s3,
          bucket,
          keys.map((key) => ({ key, body: 'v1' })),
        );
        await own.s3.send(
          new PutBucketVersioningCommand({
            Bucket: bucket,
            VersioningConfiguration: { Status: 'Enabled' },
          }),
        );
        await seedObjects(
          own.s3,
          bucket,
          keys.slice(0, 30).map((key) => ({ key, body: 'v2' })),
        );
        for (const key of keys.slice(0, 12)) {
          await own.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        }
        const listed = await own.s3.send(
          new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix }),
        );
        expect(listed.Versions ?? []).toHaveLength(90);
        expect(listed.DeleteMarkers ?? []).toHaveLength(12);
        // A marker within a second of a page's listing (S3 dates them to the second) may be the
        // page's own: these 12 are older than that when the deletion lists.
        await new Promise((resolve) => setTimeout(resolve, 2_000));

        // Act
        if (failures > 0) armFailpoint('worker.after-delete', 'error', failures);
        const reply = await ownApi.delete(name, 'logs');
        const receipt = await waitForEnd(ownApi, name, String(reply.body.deletionId));
        const fired = firedCount('worker.after-delete');
        disarmFailpoints();

        // Assess: each of the 90 versions counted once; the markers the first, unversioned
        // round laid (and the 12 already there) are not objects and are not counted.
        expect(fired).toBe(failures);
        expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: 90 });
        const after = await own.s3.send(
          new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix }),
        );
        expect(after.Versions ?? []).toEqual([]);
        expect(after.DeleteMarkers ?? []).toEqual([]);
      } finally {
        disarmFailpoints();
        await own.stop();
      }
    },
  );
});
