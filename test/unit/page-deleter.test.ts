import { DeleteObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { TransientPageError } from '../../lib/errors.ts';
import { PageDeleter } from '../../lib/page-deleter.ts';
import { BUCKET } from '../helpers/records.ts';

const s3 = mockClient(S3Client);
const sleep = vi.fn(async (_ms: number) => {});

const deleter = (maxAttempts = 6) =>
  new PageDeleter({ client: new S3Client({ region: 'us-east-1' }), maxAttempts, sleep });

const prefix = 'streams/acme/logs/1/';
const page = [
  { key: `${prefix}a`, size: 10 },
  { key: `${prefix}b`, size: 20 },
  { key: `${prefix}c`, size: 30 },
];

const keysSent = (call: number) =>
  s3.commandCalls(DeleteObjectsCommand)[call]?.args[0].input.Delete?.Objects?.map((o) => o.Key);

beforeEach(() => {
  s3.reset();
  sleep.mockClear();
});

describe('PageDeleter.deletePage', () => {
  it('deletes the whole page with one quiet DeleteObjects', async () => {
    s3.on(DeleteObjectsCommand).resolves({});

    const result = await deleter().deletePage(BUCKET, page);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(1);
    expect(s3.commandCalls(DeleteObjectsCommand)[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Delete: { Objects: page.map((object) => ({ Key: object.key })), Quiet: true },
    });
    expect(result).toEqual({ objects: 3, bytes: 60, failures: [], failedObjects: 0, failedBytes: 0, retriedKeys: 0 });
  });

  it('reports an AccessDenied key as a failure, not as deleted', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: `${prefix}b`, Code: 'AccessDenied', Message: 'Access Denied' }],
    });

    const result = await deleter().deletePage(BUCKET, page);

    expect(result).toEqual({
      objects: 2,
      bytes: 40,
      failures: [{ key: `${prefix}b`, code: 'AccessDenied', message: 'Access Denied' }],
      failedObjects: 1,
      failedBytes: 20,
      retriedKeys: 0,
    });
  });

  it('does not retry a key that failed with AccessDenied', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: `${prefix}b`, Code: 'AccessDenied', Message: 'Access Denied' }],
    });

    await deleter().deletePage(BUCKET, page);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(1);
    expect(sleep).not.toHaveBeenCalled();
  });

  describe.each(['InternalError', 'SlowDown'])('a per-key %s', (code) => {
    beforeEach(() => {
      s3.on(DeleteObjectsCommand)
        .resolvesOnce({ Errors: [{ Key: `${prefix}b`, Code: code, Message: 'try again' }] })
        .resolves({});
    });

    it('is retried for that key only, after a backoff', async () => {
      await deleter().deletePage(BUCKET, page);

      expect(keysSent(1)).toEqual([`${prefix}b`]);
      expect(sleep).toHaveBeenCalledTimes(1);
    });

    it('counts the page in full once the retry succeeds', async () => {
      const result = await deleter().deletePage(BUCKET, page);

      expect(result).toEqual({
        objects: 3,
        bytes: 60,
        failures: [],
        failedObjects: 0,
        failedBytes: 0,
        retriedKeys: 1,
      });
    });
  });

  it('throws TransientPageError when a key keeps failing transiently for maxAttempts', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [
        { Key: `${prefix}c`, Code: 'SlowDown', Message: 'Please reduce your request rate.' },
      ],
    });

    const deletion = deleter(3).deletePage(BUCKET, page);

    await expect(deletion).rejects.toBeInstanceOf(TransientPageError);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(3);
  });

  it('sends nothing for an empty page', async () => {
    const result = await deleter().deletePage(BUCKET, []);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(0);
    expect(result).toEqual({ objects: 0, bytes: 0, failures: [], failedObjects: 0, failedBytes: 0, retriedKeys: 0 });
  });
});
