import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  ListObjectVersionsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type ListedObject, ok } from '../../../lib/core/index.ts';
import { PageWorker } from '../../../lib/pipeline/page-worker.ts';
import { PageDeleter } from '../../../lib/s3/index.ts';
import type { ChainStore } from '../../../lib/store/index.ts';
import { aChain, aPage } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const prefix = 'streams/acme/logs/1/dt=2026-01-01/';
const a: ListedObject = { key: `${prefix}a`, size: 10 };
const b: ListedObject = { key: `${prefix}b`, size: 20 };
/** A key no XML body can carry: deleted alone, with DeleteObject. */
const c: ListedObject = { key: `${prefix}c\u0001`, size: 30 };

/** The dispatcher's first page of a chain: a, b and c, listed and opened. */
const record = aPage({ page: 0, lastKey: c.key, count: 3, bytes: 60 });
const opened = aChain({ lastPage: 0, ended: true, open: { '0': record } });

interface Version {
  versionId: string;
  size: number;
  marker: boolean;
}

/**
 * A bucket's versions as S3 keeps them, newest first, and a plain delete as S3 documents it:
 * versioning Enabled lays a marker over the versions; Suspended removes the null version and
 * lays a null marker in its place.
 */
class Bucket {
  readonly keys = new Map<string, Version[]>();

  constructor(readonly versioning: 'Enabled' | 'Suspended') {}

  put(object: ListedObject, versionId: string) {
    const kept = (this.keys.get(object.key) ?? []).filter((entry) => entry.versionId !== versionId);
    this.keys.set(object.key, [{ versionId, size: object.size, marker: false }, ...kept]);
  }

  deletePlain(key: string) {
    const versions = this.keys.get(key) ?? [];
    const versionId = this.versioning === 'Enabled' ? `m-${versions.length}` : 'null';
    const kept = versions.filter((entry) => entry.versionId !== versionId);
    this.keys.set(key, [{ versionId, size: 0, marker: true }, ...kept]);
    return { DeleteMarker: true, DeleteMarkerVersionId: versionId };
  }

  install() {
    s3.on(DeleteObjectsCommand).callsFake(async (input) => ({
      Deleted: (input.Delete?.Objects ?? []).map(({ Key }: { Key: string }) => ({
        Key,
        ...this.deletePlain(Key),
      })),
    }));
    s3.on(DeleteObjectCommand).callsFake(async (input) => this.deletePlain(input.Key));
    s3.on(ListObjectVersionsCommand).callsFake(async () => {
      const entries = [...this.keys.entries()]
        .sort(([one], [other]) => (one < other ? -1 : 1))
        .flatMap(([Key, versions]) =>
          versions.map((entry, at) => ({ Key, ...entry, IsLatest: at === 0 })),
        );
      return {
        Versions: entries
          .filter((entry) => !entry.marker)
          .map(({ Key, versionId, size, IsLatest }) => ({
            Key,
            VersionId: versionId,
            Size: size,
            IsLatest,
          })),
        DeleteMarkers: entries
          .filter((entry) => entry.marker)
          .map(({ Key, versionId, IsLatest }) => ({ Key, VersionId: versionId, IsLatest })),
        IsTruncated: false,
      };
    });
  }
}

/** A page worker with the real page deleter, over a chain store that takes every count. */
function worker() {
  const completePage = vi.fn<ChainStore['completePage']>(async (current) =>
    ok({ ...current, open: {} }),
  );
  const client = new S3Client({ region: 'us-east-1' });
  const pageWorker = new PageWorker({
    chains: {
      get: vi.fn(),
      recordListing: vi.fn(),
      completePage,
      slowDown: vi.fn(),
      takeSlot: vi.fn(),
      split: vi.fn(),
      markIndivisible: vi.fn(),
    },
    deletions: { get: vi.fn() },
    failures: { record: vi.fn(async () => {}) },
    fence: { isRunning: vi.fn(async () => true) },
    s3: client,
    deleter: new PageDeleter({ client, sleep: async () => {} }),
    queue: { send: vi.fn(async () => {}) },
    finalizer: { finalize: vi.fn(), settle: vi.fn(async () => 'not-ready' as const) },
    pageSize: 3,
  });
  return { pageWorker, completePage };
}

beforeEach(() => {
  s3.reset();
});

describe('PageWorker, a plain page in a bucket whose versioning is Suspended', () => {
  it('counts the keys whose null version went under the marker S3 laid as deleted', async () => {
    // Prepare: a and c were written while versioning was Suspended (or before it was ever
    // enabled); b while it was Enabled, so its version stays under the null marker.
    const bucket = new Bucket('Suspended');
    bucket.put(a, 'null');
    bucket.put(b, 'b1');
    bucket.put(c, 'null');
    bucket.install();
    const { pageWorker, completePage } = worker();

    // Act
    const outcome = await pageWorker.deleteListed(opened, record, [a, b, c]);

    // Assess: a and c are gone (c deleted alone), b is left to the versioned round
    expect(s3.commandCalls(DeleteObjectCommand)).toHaveLength(1);
    expect(bucket.keys.get(a.key)).toEqual([{ versionId: 'null', size: 0, marker: true }]);
    expect(completePage.mock.calls[0]?.[2]).toEqual({
      objects: 2,
      bytes: a.size + c.size,
      failed: 0,
    });
    expect(outcome).toMatchObject({ outcome: 'deleted', objects: 2, bytes: a.size + c.size });
  });

  it('counts a key whose listed null version went, though a version from while it was Enabled is left', async () => {
    // Prepare: b was written while versioning was Enabled (b1, 99 bytes), then again once it
    // was Suspended: the null version the page lists (20 bytes) lies over b1.
    const bucket = new Bucket('Suspended');
    bucket.put(a, 'null');
    bucket.put({ ...b, size: 99 }, 'b1');
    bucket.put(b, 'null');
    bucket.put(c, 'null');
    bucket.install();
    const { pageWorker, completePage } = worker();

    // Act
    await pageWorker.deleteListed(opened, record, [a, b, c]);

    // Assess: the three listed are gone; b1 is left to the versioned round, which counts it
    expect(bucket.keys.get(b.key)).toEqual([
      { versionId: 'null', size: 0, marker: true },
      { versionId: 'b1', size: 99, marker: false },
    ]);
    expect(completePage.mock.calls[0]?.[2]).toEqual({ objects: 3, bytes: 60, failed: 0 });
  });
});

describe('PageWorker, a plain page in a bucket whose versioning is Enabled', () => {
  it('counts no key S3 only hid behind a marker (the versioned round counts its versions)', async () => {
    // Prepare
    const bucket = new Bucket('Enabled');
    bucket.put(a, 'null');
    bucket.put(b, 'b1');
    bucket.put(c, 'c1');
    bucket.install();
    const { pageWorker, completePage } = worker();

    // Act
    await pageWorker.deleteListed(opened, record, [a, b, c]);

    // Assess
    expect(completePage.mock.calls[0]?.[2]).toEqual({ objects: 0, bytes: 0, failed: 0 });
  });
});
