import { ListObjectsV2Command, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type ChainRecord, type ListedObject, ok, pageMessage } from '../../../lib/core/index.ts';
import { PageWorker, type PageWorkerOptions } from '../../../lib/pipeline/page-worker.ts';
import { aChain, aPage, BUCKET } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const prefix = 'streams/acme/logs/1/dt=2026-01-01/';
const a: ListedObject = { key: `${prefix}a`, size: 10 };
const b: ListedObject = { key: `${prefix}b`, size: 20 };

/** The first page of a chain, listed and opened by the dispatcher; its next page handed on. */
const record = aPage({ page: 0, lastKey: b.key, count: 2, bytes: 30 });
const opened = aChain({ lastPage: 0, cursor: { key: b.key }, open: { '0': record } });

/** A page worker with a page size of 3, over stores that accept every write, and `budget`. */
function worker(chain: ChainRecord, budget: NonNullable<PageWorkerOptions['budget']>) {
  const deleter = {
    deletePage: vi.fn(async (_bucket: string, objects: ListedObject[]) => ({
      objects: objects.length,
      bytes: objects.reduce((sum, entry) => sum + entry.size, 0),
      failures: [],
      failedObjects: 0,
      failedBytes: 0,
      retriedKeys: 0,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    })),
  };
  const queue = { send: vi.fn(async () => {}) };
  const pageWorker = new PageWorker({
    chains: {
      get: vi.fn(async () => chain),
      recordListing: vi.fn(),
      completePage: vi.fn(async (current: ChainRecord) => ok({ ...current, open: {} })),
      slowDown: vi.fn(),
      takeSlot: vi.fn(),
      split: vi.fn(),
      markIndivisible: vi.fn(),
    },
    deletions: { get: vi.fn() },
    failures: { record: vi.fn(async () => {}) },
    fence: { isRunning: vi.fn(async () => true) },
    s3: new S3Client({ region: 'us-east-1' }),
    deleter,
    queue,
    finalizer: { finalize: vi.fn(), settle: vi.fn(async () => 'not-ready' as const) },
    pageSize: 3,
    budget,
  });
  return { pageWorker, deleter, queue };
}

beforeEach(() => {
  s3.reset();
  s3.on(ListObjectsV2Command).resolves({
    Contents: [a, b].map((listed) => ({ Key: listed.key, Size: listed.size })),
    IsTruncated: true,
  });
  s3.on(ListObjectVersionsCommand).resolves({});
});

describe("PageWorker and the bucket's key budget, a page sent back for it", () => {
  it('takes room from the budget when it comes back, before it deletes anything', async () => {
    // Prepare: the dispatcher's page found no room and was sent back; there is still none.
    const take = vi.fn(async () => 3);
    const giveBack = vi.fn(async () => {});
    const { pageWorker, deleter, queue } = worker(opened, { take, giveBack });
    await pageWorker.deleteListed(opened, record, [a, b]);
    const [sentBack] = queue.send.mock.calls[0] as unknown as [unknown[], number];

    // Act: the message sent back arrives
    const result = await pageWorker.handle(sentBack[0] as ReturnType<typeof pageMessage>);

    // Assess: no delete without room in the budget; it waits again, its next page not sent twice
    expect(take).toHaveBeenCalledTimes(2);
    expect(deleter.deletePage).not.toHaveBeenCalled();
    expect(result).toEqual({ outcome: 'deferred', seconds: 3 });
    expect(queue.send).toHaveBeenLastCalledWith([{ ...pageMessage(opened, 0), handedOn: true }], 3);
  });

  it('deletes once the budget has room, giving back what the page did not hold', async () => {
    // Prepare
    const take = vi.fn(async () => 0);
    const giveBack = vi.fn(async () => {});
    const { pageWorker, deleter } = worker(opened, { take, giveBack });

    // Act
    const result = await pageWorker.handle({ ...pageMessage(opened, 0), handedOn: true });

    // Assess
    expect(result).toMatchObject({ outcome: 'deleted', objects: 2 });
    expect(take).toHaveBeenCalledExactlyOnceWith(BUCKET);
    expect(giveBack).toHaveBeenCalledExactlyOnceWith(BUCKET, 2);
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [a, b]);
  });
});
