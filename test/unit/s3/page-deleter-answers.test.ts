import { DeleteObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { PageDeleter } from '../../../lib/s3/index.ts';
import { BUCKET } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const sleep = vi.fn(async (_ms: number) => {});

const deleter = () =>
  new PageDeleter({ client: new S3Client({ region: 'us-east-1' }), maxAttempts: 6, sleep });

const prefix = 'streams/acme/logs/1/';
/** One key held in two versions, beside a key of one version. */
const versions = [
  { key: `${prefix}held`, size: 10, versionId: 'v1' },
  { key: `${prefix}held`, size: 20, versionId: 'v2' },
  { key: `${prefix}free`, size: 30, versionId: 'v3' },
];

const keysSent = (call: number) =>
  s3
    .commandCalls(DeleteObjectsCommand)
    [call]?.args[0].input.Delete?.Objects?.map((o) => `${o.Key}@${o.VersionId}`);

beforeEach(() => {
  s3.reset();
  sleep.mockClear();
});

describe('PageDeleter: per-key errors that do not name their version', () => {
  it('fails each version of the key once, however many errors name the key', async () => {
    // One error per version sent, neither naming its version: each stands for every version of
    // the key, and the two must not count the same version twice.
    s3.on(DeleteObjectsCommand).resolves({
      Deleted: [{ Key: `${prefix}free`, VersionId: 'v3' }],
      Errors: [
        { Key: `${prefix}held`, Code: 'AccessDenied', Message: 'Access Denied' },
        { Key: `${prefix}held`, Code: 'AccessDenied', Message: 'Access Denied' },
      ],
    });

    const result = await deleter().deletePage(BUCKET, versions);

    expect(result.failedObjects).toBe(2);
    expect(result.failedBytes).toBe(30);
    expect(result.objects).toBe(1);
    expect(result.failures).toEqual([
      { key: `${prefix}held`, versionId: 'v1', code: 'AccessDenied', message: 'Access Denied' },
      { key: `${prefix}held`, versionId: 'v2', code: 'AccessDenied', message: 'Access Denied' },
    ]);
  });

  it('sends a version again once, however many transient errors name its key', async () => {
    s3.on(DeleteObjectsCommand)
      .resolvesOnce({
        Deleted: [{ Key: `${prefix}free`, VersionId: 'v3' }],
        Errors: [
          { Key: `${prefix}held`, Code: 'InternalError', Message: 'try again' },
          { Key: `${prefix}held`, Code: 'InternalError', Message: 'try again' },
        ],
      })
      .resolves({});

    const result = await deleter().deletePage(BUCKET, versions);

    expect(keysSent(1)).toEqual([`${prefix}held@v1`, `${prefix}held@v2`]);
    expect(result.retriedKeys).toBe(2);
    expect(result.objects).toBe(3);
  });

  it('does not send again a version that another error refused for good', async () => {
    // The version's own error refuses it; an error without a version for the same key is
    // transient. A refused version is reported, never both reported and retried.
    s3.on(DeleteObjectsCommand)
      .resolvesOnce({
        Errors: [
          { Key: `${prefix}held`, VersionId: 'v1', Code: 'AccessDenied', Message: 'held' },
          { Key: `${prefix}held`, Code: 'InternalError', Message: 'try again' },
        ],
      })
      .resolves({});

    const result = await deleter().deletePage(BUCKET, versions);

    expect(keysSent(1)).toEqual([`${prefix}held@v2`]);
    expect(result.failures).toEqual([
      { key: `${prefix}held`, versionId: 'v1', code: 'AccessDenied', message: 'held' },
    ]);
    expect(result.failedObjects).toBe(1);
  });
});
