import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { SlowDownError, TransientPageError } from '../../../lib/core/index.ts';
import { PageDeleter } from '../../../lib/s3/index.ts';
import { BUCKET } from '../../helpers/records.ts';

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
  it('deletes the whole page with one DeleteObjects that answers each key', async () => {
    s3.on(DeleteObjectsCommand).resolves({});

    const result = await deleter().deletePage(BUCKET, page);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(1);
    expect(s3.commandCalls(DeleteObjectsCommand)[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Delete: { Objects: page.map((object) => ({ Key: object.key })), Quiet: false },
    });
    expect(result).toEqual({
      objects: 3,
      bytes: 60,
      failures: [],
      failedObjects: 0,
      failedBytes: 0,
      retriedKeys: 0,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    });
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
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
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
        markersLaid: 0,
        markersLaidBytes: 0,
        nullMarkers: [],
      });
    });
  });

  it('throws TransientPageError when a key keeps failing transiently for maxAttempts', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: `${prefix}c`, Code: 'InternalError', Message: 'We encountered an error.' }],
    });

    const deletion = deleter(3).deletePage(BUCKET, page);

    await expect(deletion).rejects.toBeInstanceOf(TransientPageError);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(3);
  });

  it('throws SlowDownError when a key is still refused with SlowDown after maxAttempts', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [
        { Key: `${prefix}c`, Code: 'SlowDown', Message: 'Please reduce your request rate.' },
      ],
    });

    const deletion = deleter(3).deletePage(BUCKET, page);

    await expect(deletion).rejects.toBeInstanceOf(SlowDownError);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(3);
  });

  it('throws TransientPageError when the keys still pending last failed with another code', async () => {
    s3.on(DeleteObjectsCommand)
      .resolvesOnce({ Errors: [{ Key: `${prefix}c`, Code: 'SlowDown', Message: 'slow down' }] })
      .resolves({ Errors: [{ Key: `${prefix}c`, Code: 'InternalError', Message: 'error' }] });

    const deletion = deleter(2).deletePage(BUCKET, page);

    await expect(deletion).rejects.toBeInstanceOf(TransientPageError);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(2);
  });

  it('sends nothing for an empty page', async () => {
    const result = await deleter().deletePage(BUCKET, []);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(0);
    expect(result).toEqual({
      objects: 0,
      bytes: 0,
      failures: [],
      failedObjects: 0,
      failedBytes: 0,
      retriedKeys: 0,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    });
  });
});

describe('PageDeleter.deletePage in a versioned bucket', () => {
  const versions = [
    { key: `${prefix}a`, size: 10, versionId: 'v2' },
    { key: `${prefix}a`, size: 5, versionId: 'v1' },
    { key: `${prefix}a`, size: 0, versionId: 'm1', marker: true },
    { key: `${prefix}b`, size: 20, versionId: 'v3' },
  ];

  it('deletes by version id and counts versions, not delete markers', async () => {
    s3.on(DeleteObjectsCommand).resolves({});

    const result = await deleter().deletePage(BUCKET, versions);

    expect(s3.commandCalls(DeleteObjectsCommand)[0]?.args[0].input.Delete?.Objects).toEqual([
      { Key: `${prefix}a`, VersionId: 'v2' },
      { Key: `${prefix}a`, VersionId: 'v1' },
      { Key: `${prefix}a`, VersionId: 'm1' },
      { Key: `${prefix}b`, VersionId: 'v3' },
    ]);
    expect(result).toMatchObject({ objects: 3, bytes: 35, failedObjects: 0, failedBytes: 0 });
  });

  it('reports the held version, with its version id', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: `${prefix}b`, VersionId: 'v3', Code: 'AccessDenied', Message: 'locked' }],
    });

    const result = await deleter().deletePage(BUCKET, versions);

    expect(result.failures).toEqual([
      { key: `${prefix}b`, versionId: 'v3', code: 'AccessDenied', message: 'locked' },
    ]);
    expect(result).toMatchObject({ objects: 2, bytes: 15, failedObjects: 1, failedBytes: 20 });
  });

  it('takes an error without a version id as an error of every version of that key', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: `${prefix}a`, Code: 'AccessDenied', Message: 'locked' }],
    });

    const result = await deleter().deletePage(BUCKET, versions);

    expect(result.failures.map((failure) => failure.versionId)).toEqual(['v2', 'v1', 'm1']);
    expect(result).toMatchObject({ objects: 1, bytes: 20, failedObjects: 2 });
  });

  it('never takes an error about a key it did not send as a success', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Errors: [{ Key: `${prefix}zzz`, Code: 'AccessDenied', Message: '?' }],
    });

    await expect(deleter().deletePage(BUCKET, versions)).rejects.toThrow(/not given/);
  });
});

describe('PageDeleter.deletePage when S3 only lays a delete marker', () => {
  it('counts no key that S3 answered with DeleteMarker (its data is still there)', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Deleted: [
        { Key: `${prefix}a` },
        { Key: `${prefix}b`, DeleteMarker: true, DeleteMarkerVersionId: 'm1' },
        { Key: `${prefix}c`, DeleteMarker: true, DeleteMarkerVersionId: 'm2' },
      ],
    });

    const result = await deleter().deletePage(BUCKET, page);

    expect(result).toMatchObject({ objects: 1, bytes: 10, markersLaid: 2, markersLaidBytes: 50 });
    expect(result.nullMarkers).toEqual([]);
  });

  it('tells null markers (versioning Suspended), and markers of no id, from markers of their own', async () => {
    s3.on(DeleteObjectsCommand).resolves({
      Deleted: [
        { Key: `${prefix}a`, DeleteMarker: true, DeleteMarkerVersionId: 'null' },
        { Key: `${prefix}b`, DeleteMarker: true },
        { Key: `${prefix}c`, DeleteMarker: true, DeleteMarkerVersionId: 'm2' },
      ],
    });

    const result = await deleter().deletePage(BUCKET, page);

    expect(result).toMatchObject({ objects: 0, markersLaid: 3 });
    expect(result.nullMarkers.map((object) => object.key)).toEqual([`${prefix}a`, `${prefix}b`]);
  });

  it("takes a lone key's marker id from DeleteObject's VersionId", async () => {
    const alone = [{ key: `${prefix}x\u0001`, size: 7 }];
    s3.on(DeleteObjectCommand).resolves({ DeleteMarker: true, VersionId: 'null' });

    const result = await deleter().deletePage(BUCKET, alone);

    expect(result).toMatchObject({ objects: 0, markersLaid: 1, nullMarkers: alone });
  });

  it('counts a delete marker that was itself deleted by version as no marker laid', async () => {
    const marker = { key: `${prefix}a`, size: 0, versionId: 'm1', marker: true };
    s3.on(DeleteObjectsCommand).resolves({
      Deleted: [{ Key: marker.key, VersionId: 'm1', DeleteMarker: true }],
    });

    const result = await deleter().deletePage(BUCKET, [marker]);

    expect(result).toMatchObject({ objects: 0, markersLaid: 0 });
  });
});

describe('PageDeleter.deletePage with keys an XML body cannot carry', () => {
  const unsafe = { key: `${prefix}line\r\nbreak\u0001.json`, size: 7 };

  it('deletes such a key alone with DeleteObject, the rest in one DeleteObjects', async () => {
    s3.on(DeleteObjectsCommand).resolves({});
    s3.on(DeleteObjectCommand).resolves({});

    const result = await deleter().deletePage(BUCKET, [...page, unsafe]);

    expect(keysSent(0)).toEqual(page.map((object) => object.key));
    expect(s3.commandCalls(DeleteObjectCommand).map((call) => call.args[0].input.Key)).toEqual([
      unsafe.key,
    ]);
    expect(result).toMatchObject({ objects: 4, bytes: 67, failures: [] });
  });

  it('goes key by key when S3 refuses the body as MalformedXML', async () => {
    s3.on(DeleteObjectsCommand).rejects(
      new S3ServiceException({
        name: 'MalformedXML',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: 'The XML you provided was not well-formed',
      }),
    );
    s3.on(DeleteObjectCommand).resolves({});

    const result = await deleter().deletePage(BUCKET, page);

    expect(s3.commandCalls(DeleteObjectCommand)).toHaveLength(3);
    expect(result).toMatchObject({ objects: 3, bytes: 60 });
  });

  it('reports a key refused alone (AccessDenied) as a failure', async () => {
    s3.on(DeleteObjectCommand).rejects(
      new S3ServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'Access Denied',
      }),
    );

    const result = await deleter().deletePage(BUCKET, [unsafe]);

    expect(result).toMatchObject({
      objects: 0,
      failedObjects: 1,
      failures: [{ key: unsafe.key, code: 'AccessDenied' }],
    });
  });
});

describe('PageDeleter.deletePage when S3 refuses or fails the whole request', () => {
  const failure = (name: string, status: number) =>
    new S3ServiceException({
      name,
      $fault: status >= 500 ? 'server' : 'client',
      $metadata: { httpStatusCode: status },
      message: name,
    });

  it('throws SlowDownError on a 503 SlowDown, at once and without trying again', async () => {
    s3.on(DeleteObjectsCommand).rejects(failure('SlowDown', 503));

    await expect(deleter().deletePage(BUCKET, page)).rejects.toBeInstanceOf(SlowDownError);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(1);
    expect(sleep).not.toHaveBeenCalled();
  });

  it('tries the page again after a 500, with backoff, and counts its keys as retried', async () => {
    s3.on(DeleteObjectsCommand).rejectsOnce(failure('InternalError', 500)).resolves({});

    const result = await deleter().deletePage(BUCKET, page);

    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(2);
    expect(sleep).toHaveBeenCalledOnce();
    expect(result).toMatchObject({ objects: 3, retriedKeys: 3 });
  });

  it('gives up with TransientPageError when the 5xx outlasts maxAttempts', async () => {
    s3.on(DeleteObjectsCommand).rejects(failure('ServiceUnavailable', 503));

    await expect(deleter(3).deletePage(BUCKET, page)).rejects.toBeInstanceOf(TransientPageError);
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(3);
  });

  it('lets an error that will not pass (403) through at once', async () => {
    s3.on(DeleteObjectsCommand).rejects(failure('AccessDenied', 403));

    await expect(deleter().deletePage(BUCKET, page)).rejects.toThrow('AccessDenied');
    expect(s3.commandCalls(DeleteObjectsCommand)).toHaveLength(1);
  });

  it('throws SlowDownError when a key deleted alone is refused with SlowDown', async () => {
    s3.on(DeleteObjectCommand).rejects(failure('SlowDown', 503));

    await expect(
      deleter().deletePage(BUCKET, [{ key: `${prefix}line\u0001end`, size: 1 }]),
    ).rejects.toBeInstanceOf(SlowDownError);
    expect(s3.commandCalls(DeleteObjectCommand)).toHaveLength(1);
  });

  it('tries a key deleted alone again after a 500', async () => {
    s3.on(DeleteObjectCommand).rejectsOnce(failure('InternalError', 500)).resolves({});

    const result = await deleter().deletePage(BUCKET, [{ key: `${prefix}line\u0001end`, size: 1 }]);

    expect(s3.commandCalls(DeleteObjectCommand)).toHaveLength(2);
    expect(result).toMatchObject({ objects: 1, failures: [] });
  });
});
