import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Finalizer } from '../../lib/finalizer.ts';
import type { FinalizeMessage, PageMessage } from '../../lib/messages.ts';
import type { DeletionRecord } from '../../lib/model.ts';
import type { PageDeleter } from '../../lib/page-deleter.ts';
import { PageWorker } from '../../lib/page-worker.ts';
import type { ListedObject } from '../../lib/pager.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import type { WorkQueue } from '../../lib/work-queue.ts';
import { fake } from '../helpers/fakes.ts';
import { aChain, aDeletion, aPage, BUCKET, CHAIN_ID, DELETION_ID } from '../helpers/records.ts';

const s3 = mockClient(S3Client);
const chainPrefix = 'streams/acme/logs/1/dt=2026-01-01/';
const object = (name: string, size: number): ListedObject => ({
  key: `${chainPrefix}${name}`,
  size,
});
const [a, b, c, d] = [object('a', 10), object('b', 20), object('c', 30), object('d', 40)] as const;

const fence = { v: 1, tenant: 'acme', deletionId: DELETION_ID, generation: 1, round: 1 } as const;
const pageMessage = (page = 0): PageMessage => ({
  ...fence,
  type: 'page',
  chainId: CHAIN_ID,
  page,
});
const finalizeMessage: FinalizeMessage = { ...fence, type: 'finalize' };

/** S3 answers every listing of the chain with these objects. */
const listing = (objects: ListedObject[], truncated: boolean) =>
  s3.on(ListObjectsV2Command).resolves({
    Contents: objects.map((listed) => ({ Key: listed.key, Size: listed.size })),
    IsTruncated: truncated,
  });

function worker(deletion: DeletionRecord | undefined) {
  const store = {
    getDeletion: vi.fn<ProgressStore['getDeletion']>(async () => deletion),
    getChain: vi.fn<ProgressStore['getChain']>(async () => aChain()),
    recordListing: vi.fn<ProgressStore['recordListing']>(async (_d, chain, page, record) => ({
      outcome: 'recorded',
      chain: { ...chain, lastPage: page, open: record ? { [page]: record } : {} },
    })),
    recordFailures: vi.fn<ProgressStore['recordFailures']>(async () => {}),
    completePage: vi.fn<ProgressStore['completePage']>(async () => ({
      outcome: 'recorded',
      chain: aChain({ lastPage: 0 }),
    })),
    settleChain: vi.fn<ProgressStore['settleChain']>(async () => 'recorded'),
    touch: vi.fn<ProgressStore['touch']>(async () => {}),
  };
  const deleter = {
    deletePage: vi.fn<PageDeleter['deletePage']>(async (_bucket, objects) => ({
      objects: objects.length,
      bytes: objects.reduce((sum, listed) => sum + listed.size, 0),
      failures: [],
      failedObjects: 0,
      failedBytes: 0,
      retriedKeys: 0,
    })),
  };
  const queue = { send: vi.fn<WorkQueue['send']>(async () => {}) };
  const finalizer = {
    finalize: vi.fn<Finalizer['finalize']>(async () => 'completed'),
    finalizeIfReady: vi.fn<Finalizer['finalizeIfReady']>(async () => 'not-ready'),
  };
  const pageWorker = new PageWorker({
    store: fake<ProgressStore>(store),
    s3: new S3Client({ region: 'us-east-1' }),
    deleter: fake<PageDeleter>(deleter),
    queue: fake<WorkQueue>(queue),
    finalizer: fake<Finalizer>(finalizer),
    pageSize: 3,
  });
  return { pageWorker, store, deleter, queue, finalizer };
}

beforeEach(() => {
  s3.reset();
});

describe.each<[string, DeletionRecord | undefined]>([
  ['a missing deletion', undefined],
  ['a PENDING deletion', aDeletion({ state: 'PENDING' })],
  ['a COMPLETED deletion', aDeletion({ state: 'COMPLETED' })],
  ['a FAILED deletion', aDeletion({ state: 'FAILED' })],
  ['another generation', aDeletion({ generation: 2 })],
  ['another round', aDeletion({ round: 2 })],
])('a page message for %s', (_, deletion) => {
  it('is stale and deletes nothing', async () => {
    const { pageWorker, deleter, store } = worker(deletion);
    listing([a, b, c], false);

    const outcome = await pageWorker.handle(pageMessage());

    expect(outcome).toEqual({ outcome: 'stale' });
    expect(deleter.deletePage).not.toHaveBeenCalled();
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(0);
    expect(store.completePage).not.toHaveBeenCalled();
  });
});

describe('PageWorker.handle', () => {
  it('does not finalize a deletion that is no longer RUNNING', async () => {
    const { pageWorker, finalizer } = worker(aDeletion({ state: 'COMPLETED' }));

    const outcome = await pageWorker.handle(finalizeMessage);

    expect(outcome).toEqual({ outcome: 'stale' });
    expect(finalizer.finalize).not.toHaveBeenCalled();
  });

  it('ignores a page that is ahead of its chain', async () => {
    const { pageWorker, deleter } = worker(aDeletion());

    const outcome = await pageWorker.handle(pageMessage(3));

    expect(outcome).toEqual({ outcome: 'stale' });
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('lists the page from the chain cursor and records it before deleting', async () => {
    const { pageWorker, store } = worker(aDeletion());
    store.getChain.mockResolvedValue(aChain({ lastPage: 0, lastKey: a.key }));
    listing([b, c, d], true);

    await pageWorker.handle(pageMessage(1));

    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Prefix: chainPrefix,
      MaxKeys: 3,
      StartAfter: a.key,
    });
    expect(store.recordListing).toHaveBeenCalledWith(
      aDeletion(),
      aChain({ lastPage: 0, lastKey: a.key }),
      1,
      {
        chainId: CHAIN_ID,
        round: 1,
        page: 1,
        startAfter: a.key,
        lastKey: d.key,
        count: 3,
        bytes: 90,
      },
      false,
    );
  });

  it('hands the next page to the queue when more keys follow', async () => {
    const { pageWorker, queue } = worker(aDeletion());
    listing([a, b, c], true);

    await pageWorker.handle(pageMessage(0));

    expect(queue.send).toHaveBeenCalledExactlyOnceWith([pageMessage(1)]);
  });

  it('sends no next page after the last one', async () => {
    const { pageWorker, queue } = worker(aDeletion());
    listing([a, b], false);

    await pageWorker.handle(pageMessage(0));

    expect(queue.send).not.toHaveBeenCalled();
  });

  it('counts page.count - failures objects, and the bytes of the deleted ones', async () => {
    const { pageWorker, store, deleter } = worker(aDeletion());
    listing([a, b, c], false);
    const denied = { key: b.key, code: 'AccessDenied', message: 'Access Denied' };
    deleter.deletePage.mockResolvedValue({
      objects: 2,
      bytes: 40,
      failures: [denied],
      failedObjects: 1,
      failedBytes: 20,
      retriedKeys: 0,
    });

    const outcome = await pageWorker.handle(pageMessage(0));

    expect(store.completePage).toHaveBeenCalledExactlyOnceWith(
      aDeletion(),
      expect.objectContaining({ page: 0, count: 3, bytes: 60 }),
      { objects: 2, bytes: 40, failed: 1 },
    );
    expect(store.recordFailures).toHaveBeenCalledExactlyOnceWith(aDeletion(), [denied]);
    expect(outcome).toEqual({
      outcome: 'deleted',
      objects: 2,
      bytes: 40,
      failures: 1,
      retriedKeys: 0,
    });
  });

  it('refuses a chain whose prefix lies outside the deletion location', async () => {
    const { pageWorker, store, deleter } = worker(aDeletion());
    store.getChain.mockResolvedValue(aChain({ prefix: 'streams/acme/logs2/1/' }));
    listing([a], false);

    const outcome = pageWorker.handle(pageMessage(0));

    await expect(outcome).rejects.toThrow(/outside the deletion's location/);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });
});

describe('PageWorker.handle, when another delivery already listed the page', () => {
  /** Page 0 was recorded as a, b, c; a was deleted before a crash; d belongs to page 1. */
  const recorded = aPage({ page: 0, lastKey: c.key, count: 3, bytes: 60 });

  const listedAlready = aChain({ lastPage: 0, lastKey: c.key, open: { '0': recorded } });
  const duplicate = () => {
    const setup = worker(aDeletion());
    setup.store.recordListing.mockResolvedValue({ outcome: 'duplicate' });
    setup.store.getChain.mockResolvedValueOnce(aChain()).mockResolvedValue(listedAlready);
    listing([b, c, d], true);
    return setup;
  };

  it("deletes only what is left of the recorded page's range", async () => {
    const { pageWorker, deleter } = duplicate();

    await pageWorker.handle(pageMessage(0));

    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
  });

  it('counts the recorded page once, not the new listing', async () => {
    const { pageWorker, store } = duplicate();

    const outcome = await pageWorker.handle(pageMessage(0));

    expect(store.completePage).toHaveBeenCalledExactlyOnceWith(aDeletion(), recorded, {
      objects: 3,
      bytes: 60,
      failed: 0,
    });
    expect(outcome).toEqual({
      outcome: 'deleted',
      objects: 3,
      bytes: 60,
      failures: 0,
      retriedKeys: 0,
    });
  });

  it('deletes nothing when the recorded page was already completed', async () => {
    const { pageWorker, store, deleter } = duplicate();
    store.getChain
      .mockReset()
      .mockResolvedValueOnce(aChain())
      .mockResolvedValue(aChain({ lastPage: 0, lastKey: c.key }));

    const outcome = await pageWorker.handle(pageMessage(0));

    expect(outcome).toEqual({ outcome: 'duplicate' });
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('reports a duplicate, and finalizes nothing, when the count was recorded meanwhile', async () => {
    const { pageWorker, store, finalizer } = duplicate();
    store.completePage.mockResolvedValue({ outcome: 'duplicate' });

    const outcome = await pageWorker.handle(pageMessage(0));

    expect(outcome).toEqual({ outcome: 'duplicate' });
    expect(finalizer.finalizeIfReady).not.toHaveBeenCalled();
  });

  it('resumes a redelivered page without recording its listing again', async () => {
    const { pageWorker, store, deleter } = duplicate();
    store.getChain.mockReset().mockResolvedValue(listedAlready);

    await pageWorker.handle(pageMessage(0));

    expect(store.recordListing).not.toHaveBeenCalled();
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
  });
});

describe('PageWorker.handle, at the end of a chain', () => {
  it('settles a chain that ended with no page open, then looks whether the round is done', async () => {
    const { pageWorker, store, finalizer } = worker(aDeletion());
    listing([a, b], false);
    const ended = aChain({ lastPage: 0, ended: true, open: {} });
    store.completePage.mockResolvedValue({ outcome: 'recorded', chain: ended });

    await pageWorker.handle(pageMessage(0));

    expect(store.settleChain).toHaveBeenCalledExactlyOnceWith(aDeletion(), ended);
    expect(finalizer.finalizeIfReady).toHaveBeenCalledTimes(1);
  });

  it('does not settle while another page of the chain is still open', async () => {
    const { pageWorker, store, finalizer } = worker(aDeletion());
    listing([a, b], false);
    store.completePage.mockResolvedValue({
      outcome: 'recorded',
      chain: aChain({ lastPage: 1, ended: true, open: { '1': aPage({ page: 1 }) } }),
    });

    await pageWorker.handle(pageMessage(0));

    expect(store.settleChain).not.toHaveBeenCalled();
    expect(finalizer.finalizeIfReady).not.toHaveBeenCalled();
  });

  it('finalizes, without settling twice, when a redelivery finds the chain already settled', async () => {
    const { pageWorker, store, finalizer } = worker(aDeletion());
    store.getChain.mockResolvedValue(aChain({ lastPage: 0, ended: true, settled: true }));

    const outcome = await pageWorker.handle(pageMessage(0));

    expect(outcome).toEqual({ outcome: 'duplicate' });
    expect(store.settleChain).not.toHaveBeenCalled();
    expect(finalizer.finalizeIfReady).toHaveBeenCalledTimes(1);
  });
});

describe('PageWorker.handle, progress for the sweeper', () => {
  it('marks progress on a deletion last marked long ago', async () => {
    const { pageWorker, store } = worker(aDeletion({ updatedAt: '2000-01-01T00:00:00.000Z' }));
    listing([a], false);

    await pageWorker.handle(pageMessage(0));

    expect(store.touch).toHaveBeenCalledTimes(1);
  });

  it('leaves a deletion marked a moment ago alone', async () => {
    const { pageWorker, store } = worker(aDeletion({ updatedAt: new Date().toISOString() }));
    listing([a], false);

    await pageWorker.handle(pageMessage(0));

    expect(store.touch).not.toHaveBeenCalled();
  });
});
