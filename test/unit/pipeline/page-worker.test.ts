import { ListObjectsV2Command, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChainRecord,
  clockOf,
  type DeletionRecord,
  duplicate,
  type FinalizeMessage,
  fenced,
  finalizeMessage,
  type ListedObject,
  ok,
  type PageRecord,
  pageMessage,
  SlowDownError,
} from '../../../lib/core/index.ts';
import type { DeletionFence, Finalizer } from '../../../lib/pipeline/index.ts';
import { PACE } from '../../../lib/pipeline/pace.ts';
import { PageWorker, type PageWorkerOptions } from '../../../lib/pipeline/page-worker.ts';
import type { PageDeleter } from '../../../lib/s3/index.ts';
import type { ChainStore, DeletionStore, FailureStore } from '../../../lib/store/index.ts';
import { armFailpoint, disarmFailpoints } from '../../../lib/support/index.ts';
import { aChain, aDeletion, aPage, BUCKET, CHAIN_ID, DELETION_ID } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const location = 'streams/acme/logs/1/';
const chainPrefix = `${location}dt=2026-01-01/`;
const object = (name: string, size: number): ListedObject => ({
  key: `${chainPrefix}${name}`,
  size,
});
const [a, b, c, d] = [object('a', 10), object('b', 20), object('c', 30), object('d', 40)] as const;
const version = (listed: ListedObject, versionId: string): ListedObject => ({
  ...listed,
  versionId,
});

/**
 * The deleter's answer for a plain page `sent` when S3 answered `marked` with delete markers,
 * `nullMarked` of them null markers (versioning Suspended).
 */
const markersOn = (
  sent: ListedObject[],
  marked: ListedObject[],
  nullMarked: ListedObject[] = [],
) => {
  const bytes = (list: ListedObject[]) => list.reduce((sum, entry) => sum + entry.size, 0);
  return {
    objects: sent.length - marked.length,
    bytes: bytes(sent) - bytes(marked),
    failures: [],
    failedObjects: 0,
    failedBytes: 0,
    retriedKeys: 0,
    markersLaid: marked.length,
    markersLaidBytes: bytes(marked),
    nullMarkers: nullMarked,
  };
};

/** The time a listing records (the chain's start, on its first page). */
const listedAt = expect.any(Number);

/** The message for page `page` of the test chain. */
const page = (number: number) => pageMessage(aChain(), number);
const finalize: FinalizeMessage = finalizeMessage(aDeletion());

/** S3 answers every plain listing of the chain with these objects. */
const listing = (objects: ListedObject[], truncated: boolean) =>
  s3.on(ListObjectsV2Command).resolves({
    Contents: objects.map((listed) => ({
      Key: listed.key,
      Size: listed.size,
      ...(listed.modified !== undefined ? { LastModified: new Date(listed.modified) } : {}),
    })),
    IsTruncated: truncated,
  });

/** S3 answers every versioned listing of the chain with these versions (and delete markers). */
const versionListing = (entries: ListedObject[], next?: { key: string; versionId: string }) => {
  // Whether it is current, and a marker's date, only when the entry says.
  const state = (entry: ListedObject) => ({
    ...(entry.latest !== undefined ? { IsLatest: entry.latest } : {}),
    ...(entry.modified !== undefined ? { LastModified: new Date(entry.modified) } : {}),
  });
  return s3.on(ListObjectVersionsCommand).resolves({
    Versions: entries
      .filter((entry) => !entry.marker)
      .map((entry) => ({
        Key: entry.key,
        Size: entry.size,
        VersionId: entry.versionId,
        ...(entry.etag !== undefined ? { ETag: entry.etag } : {}),
        ...state(entry),
      })),
    DeleteMarkers: entries
      .filter((entry) => entry.marker)
      .map((entry) => ({ Key: entry.key, VersionId: entry.versionId, ...state(entry) })),
    IsTruncated: next !== undefined,
    ...(next ? { NextKeyMarker: next.key, NextVersionIdMarker: next.versionId } : {}),
  });
};
/** A delete marker over `listed`, current, laid at `modified` (epoch ms) when given. */
const markerOver = (listed: ListedObject, versionId: string, modified?: number): ListedObject => ({
  key: listed.key,
  size: 0,
  versionId,
  marker: true,
  latest: true,
  ...(modified !== undefined ? { modified } : {}),
});

/** The chain as the store writes it when a listing is recorded. */
function listed(
  chain: ChainRecord,
  pageNumber: number,
  record: PageRecord | undefined,
  next: ChainRecord['cursor'],
): ChainRecord {
  return {
    ...chain,
    lastPage: pageNumber,
    ended: next === undefined,
    ...(next ? { cursor: next } : {}),
    open: record ? { ...chain.open, [String(pageNumber)]: record } : chain.open,
  };
}

/** The chain as the store writes it when a page is counted and closed. */
function completed(chain: ChainRecord, record: PageRecord): ChainRecord {
  const open = Object.fromEntries(
    Object.entries(chain.open).filter(([number]) => number !== String(record.page)),
  );
  return { ...chain, open, pagesDone: chain.pagesDone + 1 };
}

/** A page worker over stores that accept every write, for a chain (by default, not started). */
function worker(
  chain: ChainRecord = aChain(),
  budget?: PageWorkerOptions['budget'],
  timing: Pick<PageWorkerOptions, 'clock' | 'sleep'> = {},
) {
  const chains = {
    get: vi.fn<ChainStore['get']>(async () => chain),
    recordListing: vi.fn<ChainStore['recordListing']>(async (current, number, record, next) =>
      ok(listed(current, number, record, next)),
    ),
    completePage: vi.fn<ChainStore['completePage']>(async (current, record) =>
      ok(completed(current, record)),
    ),
    slowDown: vi.fn<ChainStore['slowDown']>(async () => ({ ok: true as const })),
    takeSlot: vi.fn<ChainStore['takeSlot']>(async (current, next) => ({
      ...current,
      nextAt: next,
    })),
    split: vi.fn<ChainStore['split']>(async (current, _page, from) =>
      ok(aChain({ chainId: `split-${from}`, prefix: current.prefix, range: { from } })),
    ),
    markIndivisible: vi.fn<ChainStore['markIndivisible']>(async () => {}),
  } satisfies PageWorkerOptions['chains'];
  const deletions = {
    get: vi.fn<DeletionStore['get']>(async () => aDeletion()),
  } satisfies PageWorkerOptions['deletions'];
  const failures = {
    record: vi.fn<FailureStore['record']>(async () => {}),
  } satisfies PageWorkerOptions['failures'];
  const fence = {
    isRunning: vi.fn<DeletionFence['isRunning']>(async () => true),
  } satisfies PageWorkerOptions['fence'];
  const deleter = {
    deletePage: vi.fn<PageDeleter['deletePage']>(async (_bucket, objects) => ({
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
  } satisfies PageWorkerOptions['deleter'];
  const queue = {
    send: vi.fn<PageWorkerOptions['queue']['send']>(async () => {}),
  } satisfies PageWorkerOptions['queue'];
  const finalizer = {
    finalize: vi.fn<Finalizer['finalize']>(async () => 'completed'),
    settle: vi.fn<Finalizer['settle']>(async () => 'not-ready'),
  } satisfies PageWorkerOptions['finalizer'];
  const pageWorker = new PageWorker({
    chains,
    deletions,
    failures,
    fence,
    s3: new S3Client({ region: 'us-east-1' }),
    deleter,
    queue,
    finalizer,
    pageSize: 3,
    ...(budget ? { budget } : {}),
    ...timing,
  });
  return { pageWorker, chains, deletions, failures, fence, deleter, queue, finalizer };
}

beforeEach(() => {
  s3.reset();
  // An unversioned bucket: a page listed again finds no version and no delete marker.
  s3.on(ListObjectVersionsCommand).resolves({});
});

describe.each<[string, () => ReturnType<typeof worker>]>([
  [
    'a chain that does not exist',
    () => {
      const setup = worker();
      setup.chains.get.mockResolvedValue(undefined);
      return setup;
    },
  ],
  ['a chain of another generation', () => worker(aChain({ generation: 2 }))],
  [
    'a deletion that no longer runs the round',
    () => {
      const setup = worker();
      setup.fence.isRunning.mockResolvedValue(false);
      return setup;
    },
  ],
  [
    'a deletion that no longer runs the round, with the page open',
    () => {
      const setup = worker(aChain({ lastPage: 0, open: { '0': aPage({ lastKey: c.key }) } }));
      setup.fence.isRunning.mockResolvedValue(false);
      return setup;
    },
  ],
  // A straggler of an attempt given up as Stalled: its fence may still say running (learned
  // before the verdict, or while it was being given), but the verdict stopped its chain.
  [
    'a chain stopped by a Stalled verdict, its fence still saying running',
    () => worker(aChain({ stopped: true })),
  ],
  [
    'a chain stopped by a Stalled verdict, with the page open',
    () => worker(aChain({ stopped: true, lastPage: 0, open: { '0': aPage({ lastKey: c.key }) } })),
  ],
])('a page message for %s', (_, setup) => {
  it('is stale, and lists, deletes and records nothing', async () => {
    // Prepare
    const { pageWorker, deleter, chains } = setup();
    listing([a, b, c], false);

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome.outcome).toBe('stale');
    expect(s3.calls()).toHaveLength(0);
    expect(deleter.deletePage).not.toHaveBeenCalled();
    expect(chains.recordListing).not.toHaveBeenCalled();
    expect(chains.completePage).not.toHaveBeenCalled();
  });
});

describe('PageWorker.handle, a page', () => {
  it('reads only its chain, which carries the fence, and never the deletion', async () => {
    // Prepare
    const { pageWorker, chains, deletions } = worker();
    listing([a], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.get).toHaveBeenCalledExactlyOnceWith(page(0), CHAIN_ID);
    expect(deletions.get).not.toHaveBeenCalled();
  });

  it('asks the fence whether the chain it read still runs its round', async () => {
    // Prepare
    const chain = aChain({ round: 1, generation: 1 });
    const { pageWorker, fence } = worker(chain);
    listing([a], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(fence.isRunning).toHaveBeenCalledExactlyOnceWith(chain);
  });

  it("names the chain's stream in the pages it hands on", async () => {
    // Prepare
    const { pageWorker, queue } = worker(aChain({ stream: 'clicks' }));
    listing([a], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(queue.send.mock.calls[0]?.[0]).toEqual([
      expect.objectContaining({ stream: 'clicks', page: 1 }),
    ]);
  });

  it('ignores a page that is ahead of its chain', async () => {
    // Prepare
    const { pageWorker, deleter } = worker(aChain({ lastPage: -1 }));

    // Act
    const outcome = await pageWorker.handle(page(3));

    // Assess
    expect(outcome.outcome).toBe('stale');
    expect(s3.calls()).toHaveLength(0);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('ignores the page after the last one of a chain that has ended', async () => {
    // Prepare
    const { pageWorker, deleter } = worker(aChain({ lastPage: 2, ended: true }));

    // Act
    const outcome = await pageWorker.handle(page(3));

    // Assess
    expect(outcome.outcome).toBe('stale');
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it("lists the page after the chain's cursor", async () => {
    // Prepare
    const { pageWorker } = worker(aChain({ lastPage: 0, cursor: { key: a.key } }));
    listing([b, c, d], true);

    // Act
    await pageWorker.handle(page(1));

    // Assess
    expect(s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input)).toEqual([
      { Bucket: BUCKET, Prefix: chainPrefix, MaxKeys: 3, EncodingType: 'url', StartAfter: a.key },
    ]);
  });

  it("records the page's range, its count and bytes, and where the next page starts", async () => {
    // Prepare
    const chain = aChain({ lastPage: 0, cursor: { key: a.key } });
    const { pageWorker, chains } = worker(chain);
    listing([b, c, d], true);

    // Act
    await pageWorker.handle(page(1));

    // Assess
    expect(chains.recordListing).toHaveBeenCalledExactlyOnceWith(
      chain,
      1,
      { page: 1, after: { key: a.key }, lastKey: d.key, count: 3, bytes: 90 },
      { key: d.key },
      listedAt,
    );
  });

  it('records the listing before it deletes anything', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = worker();
    listing([a, b], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    const [recorded] = chains.recordListing.mock.invocationCallOrder;
    const [deleted] = deleter.deletePage.mock.invocationCallOrder;
    expect(recorded).toBeLessThan(deleted ?? 0);
  });

  it('records the last page of a chain with no next position (the chain ends)', async () => {
    // Prepare
    const { pageWorker, chains } = worker();
    listing([a, b], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.recordListing.mock.calls[0]?.[3]).toBeUndefined();
  });

  it("defers the page's message by the seconds the bucket's key budget asks, listing and deleting nothing", async () => {
    // Prepare
    const take = vi.fn(async () => 4);
    const giveBack = vi.fn(async () => {});
    const { pageWorker, queue, chains, deleter } = worker(aChain(), { take, giveBack });
    listing([a, b, c], true);

    // Act
    const result = await pageWorker.handle(page(0));

    // Assess
    expect(result).toEqual({ outcome: 'deferred', seconds: 4 });
    expect(take).toHaveBeenCalledExactlyOnceWith(aChain().bucket);
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(0)], 4);
    expect(chains.recordListing).not.toHaveBeenCalled();
    expect(deleter.deletePage).not.toHaveBeenCalled();
    expect(giveBack).not.toHaveBeenCalled();
  });

  it('lists and deletes the page when the key budget has room for it, and says what it listed', async () => {
    // Prepare
    const take = vi.fn(async () => 0);
    const giveBack = vi.fn(async () => {});
    const { pageWorker, deleter } = worker(aChain(), { take, giveBack });
    listing([a, b], false);

    // Act
    const result = await pageWorker.handle(page(0));

    // Assess
    expect(result).toMatchObject({ outcome: 'deleted', objects: 2 });
    expect(deleter.deletePage).toHaveBeenCalledOnce();
    expect(giveBack).toHaveBeenCalledExactlyOnceWith(aChain().bucket, 2);
  });

  it('lists a range chain from the start of its range and deletes only the keys in it', async () => {
    // Prepare: the chain holds day 2 of the location; the listing runs on into day 3.
    const day = (n: number) => `${location}dt=2026-01-0${n}/`;
    const chain = aChain({ prefix: location, range: { from: day(2), below: day(3) } });
    const keys = [`${location}dt=2026-01-02-x`, `${day(2)}a`, `${day(2)}b`, `${day(3)}a`];
    s3.on(ListObjectsV2Command).resolves({
      Contents: keys.map((Key) => ({ Key, Size: 5 })),
      IsTruncated: true,
    });
    const { pageWorker, deleter, chains, queue } = worker(chain);

    // Act
    await pageWorker.handle(pageMessage(chain, 0));

    // Assess: listed after a key just before the range; the range ends at day 3, so does the chain.
    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).toMatchObject({
      Prefix: location,
      StartAfter: `${location}dt=2026-01-02`,
    });
    expect(deleter.deletePage.mock.calls[0]?.[1].map((entry) => entry.key)).toEqual([
      `${day(2)}a`,
      `${day(2)}b`,
    ]);
    expect(chains.recordListing.mock.calls[0]?.[2]).toMatchObject({ count: 2, bytes: 10 });
    expect(chains.recordListing.mock.calls[0]?.[3]).toBeUndefined();
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('hands on the next page of a range chain while its range goes on', async () => {
    // Prepare
    const chain = aChain({ prefix: location, range: { below: `${location}dt=2026-01-09/` } });
    listing([a, b], true);
    const { pageWorker, queue, chains } = worker(chain);

    // Act
    await pageWorker.handle(pageMessage(chain, 0));

    // Assess
    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).not.toHaveProperty(
      'StartAfter',
    );
    expect(chains.recordListing.mock.calls[0]?.[3]).toEqual({ key: b.key });
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([pageMessage(chain, 1)]);
  });

  describe('PageWorker, a range chain whose page comes back full inside its range', () => {
    const day = (n: number) => `${location}dt=2026-01-0${n}/`;
    const rangeChain = aChain({ prefix: location, range: { below: day(9) } });
    /** The chain's page: two keys of day 1, more to come; child prefixes after them by delimiter. */
    const full = (children: number[]) => {
      s3.on(ListObjectsV2Command).resolves({
        Contents: [`${day(1)}a`, `${day(1)}b`].map((Key) => ({ Key, Size: 1 })),
        IsTruncated: true,
      });
      s3.on(ListObjectsV2Command, { Delimiter: '/' }).resolves({
        CommonPrefixes: children.map((n) => ({ Prefix: day(n) })),
        IsTruncated: false,
      });
    };

    it('hands the later half of the child prefixes left in its range to a new chain, and starts it', async () => {
      // Prepare: day 1 (its own, rolled up again), days 2 to 8 left, day 9 past the range.
      full([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const { pageWorker, chains, queue } = worker(rangeChain);

      // Act
      await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      expect(
        s3.commandCalls(ListObjectsV2Command, { Delimiter: '/' })[0]?.args[0].input,
      ).toMatchObject({ Prefix: location, StartAfter: `${day(1)}b` });
      expect(chains.split).toHaveBeenCalledExactlyOnceWith(rangeChain, 0, day(5));
      expect(queue.send).toHaveBeenCalledWith([
        pageMessage(aChain({ chainId: `split-${day(5)}` }), 0),
      ]);
      expect(queue.send).toHaveBeenCalledWith([pageMessage(rangeChain, 1)]);
    });

    it('starts the new chain even when another delivery recorded the page first', async () => {
      // Prepare: this run split the range, then lost the page's listing to a duplicate.
      full([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const { pageWorker, chains, queue } = worker(rangeChain);
      const recorded = aPage({ page: 0, lastKey: `${day(1)}b`, count: 2, bytes: 2 });
      chains.recordListing.mockResolvedValue(
        duplicate({
          ...rangeChain,
          lastPage: 0,
          cursor: { key: recorded.lastKey },
          open: { '0': recorded },
        }),
      );

      // Act
      await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      expect(chains.split).toHaveBeenCalledOnce();
      expect(queue.send).toHaveBeenCalledWith([
        pageMessage(aChain({ chainId: `split-${day(5)}` }), 0),
      ]);
    });

    it("starts the new chain before it records its own page's listing", async () => {
      // Prepare
      full([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const { pageWorker, chains, queue } = worker(rangeChain);

      // Act
      await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      const started = queue.send.mock.calls.findIndex(
        ([[message]]) => message?.type === 'page' && message.chainId === `split-${day(5)}`,
      );
      const [recordedAt] = chains.recordListing.mock.invocationCallOrder;
      expect(queue.send.mock.invocationCallOrder[started]).toBeLessThan(recordedAt ?? 0);
    });

    it('marks its range indivisible when no child prefix is left in it, and does not split', async () => {
      // Prepare
      full([1, 9]);
      const { pageWorker, chains } = worker(rangeChain);

      // Act
      await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      expect(chains.markIndivisible).toHaveBeenCalledExactlyOnceWith(rangeChain);
      expect(chains.split).not.toHaveBeenCalled();
    });

    it('neither splits nor marks its range indivisible behind a run of empty truncated pages', async () => {
      // Prepare: S3 answers the listing by delimiter with empty truncated pages only.
      full([]);
      s3.on(ListObjectsV2Command, { Delimiter: '/' }).resolves({
        KeyCount: 0,
        IsTruncated: true,
        NextContinuationToken: 't',
      });
      const { pageWorker, chains, queue } = worker(rangeChain);

      // Act
      await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess: the next page looks for a split again
      expect(chains.markIndivisible).not.toHaveBeenCalled();
      expect(chains.split).not.toHaveBeenCalled();
      expect(queue.send).toHaveBeenCalledExactlyOnceWith([pageMessage(rangeChain, 1)]);
    });

    it('looks for no split once its range is indivisible, nor when its page ends the range', async () => {
      // Prepare
      full([1, 2, 3]);
      const indivisible = aChain({ ...rangeChain, range: { below: day(9), indivisible: true } });
      const { pageWorker, chains } = worker(indivisible);

      // Act
      await pageWorker.handle(pageMessage(indivisible, 0));
      listing([a, b], false);
      await worker(rangeChain).pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      expect(s3.commandCalls(ListObjectsV2Command, { Delimiter: '/' })).toHaveLength(0);
      expect(chains.split).not.toHaveBeenCalled();
    });

    it('lists its page again when the chain moved while it split', async () => {
      // Prepare
      full([1, 2, 3]);
      const { pageWorker, chains } = worker(rangeChain);
      chains.split.mockResolvedValueOnce(duplicate());

      // Act
      await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      expect(chains.split).toHaveBeenCalledTimes(2);
      expect(chains.recordListing).toHaveBeenCalledOnce();
    });

    it('stops, as stale, when its deletion left the round while it split', async () => {
      // Prepare
      full([1, 2, 3]);
      const { pageWorker, chains, deleter } = worker(rangeChain);
      chains.split.mockResolvedValue(fenced());

      // Act
      const outcome = await pageWorker.handle(pageMessage(rangeChain, 0));

      // Assess
      expect(outcome).toEqual({ outcome: 'stale' });
      expect(chains.split).toHaveBeenCalledOnce();
      expect(chains.recordListing).not.toHaveBeenCalled();
      expect(deleter.deletePage).not.toHaveBeenCalled();
    });
  });

  it('hands the next page to the queue when more keys follow', async () => {
    // Prepare
    const { pageWorker, queue } = worker();
    listing([a, b, c], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(1)]);
  });

  it('hands the next page on before deleting this one (pipelining)', async () => {
    // Prepare
    const { pageWorker, queue, deleter } = worker();
    listing([a, b, c], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    const [sent] = queue.send.mock.invocationCallOrder;
    const [deleted] = deleter.deletePage.mock.invocationCallOrder;
    expect(sent).toBeLessThan(deleted ?? 0);
  });

  it('hands on the next page after a listing that came back empty but truncated', async () => {
    // Prepare
    const { pageWorker, chains, queue, deleter } = worker(
      aChain({ lastPage: 0, cursor: { key: a.key } }),
    );
    s3.on(ListObjectsV2Command).resolves({
      Contents: [],
      IsTruncated: true,
      NextContinuationToken: 't1',
    });

    // Act
    await pageWorker.handle(page(1));

    // Assess: the cursor keeps S3's token, the one position past an empty page
    const next = { key: a.key, token: 't1' };
    expect(chains.recordListing.mock.calls[0]?.slice(1, 4)).toEqual([1, undefined, next]);
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(2)]);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('sends no next page after the last one', async () => {
    // Prepare
    const { pageWorker, queue } = worker();
    listing([a, b], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('deletes what it listed, in the bucket of the chain', async () => {
    // Prepare
    const { pageWorker, deleter } = worker();
    listing([a, b, c], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [a, b, c]);
  });

  it('counts page.count - failures objects, and the bytes of the deleted ones', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = worker();
    listing([a, b, c], false);
    const denied = { key: b.key, code: 'AccessDenied', message: 'Access Denied' };
    deleter.deletePage.mockResolvedValue({
      objects: 2,
      bytes: 40,
      failures: [denied],
      failedObjects: 1,
      failedBytes: 20,
      retriedKeys: 0,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    });

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ chainId: CHAIN_ID, lastPage: 0 }),
      expect.objectContaining({ page: 0, count: 3, bytes: 60 }),
      { objects: 2, bytes: 40, failed: 1 },
      undefined,
    );
    expect(outcome).toEqual({
      outcome: 'deleted',
      objects: 2,
      bytes: 40,
      failures: 1,
      retriedKeys: 0,
    });
  });

  it('counts no key that only got a delete marker (the bucket turned versioned under it)', async () => {
    // Prepare: S3 answered markers of their own ids for a and c: their versions are still there.
    const { pageWorker, chains, deleter } = worker();
    listing([a, b, c], false);
    deleter.deletePage.mockResolvedValue(markersOn([a, b, c], [a, c]));

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ chainId: CHAIN_ID }),
      expect.objectContaining({ page: 0, count: 3, bytes: 60 }),
      { objects: 1, bytes: b.size, failed: 0 },
      undefined,
    );
    expect(outcome).toMatchObject({ outcome: 'deleted', objects: 1, bytes: b.size });
    // S3 laid them over the versions: no reading of versions can show a race or say more.
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(0);
  });

  it('counts a key whose marker lies over nothing as deleted (versioning Suspended removed its null version)', async () => {
    // Prepare: every key got a null marker; a and b were null versions, gone with it; c was
    // written while versioning was Enabled, and its version is still there.
    const { pageWorker, chains, deleter } = worker();
    listing([a, b, c], false);
    deleter.deletePage.mockResolvedValue(markersOn([a, b, c], [a, b, c], [a, b, c]));
    versionListing([
      markerOver(a, 'null'),
      markerOver(b, 'null'),
      markerOver(c, 'null'),
      version(c, 'c1'),
    ]);

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess: a and b are deleted; c is left to the versioned round, which counts it
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({
      objects: 2,
      bytes: a.size + b.size,
      failed: 0,
    });
    expect(outcome).toMatchObject({ outcome: 'deleted', objects: 2, bytes: a.size + b.size });
    expect(s3.commandCalls(ListObjectVersionsCommand)[0]?.args[0].input).toMatchObject({
      Prefix: chainPrefix,
    });
  });

  it('never takes a refused key for one hidden by a marker (it is counted once, as a failure)', async () => {
    // Prepare: b was refused, a and c got markers over nothing; b's current version is a marker
    // someone else laid over it.
    const { pageWorker, chains, deleter } = worker();
    listing([a, b, c], false);
    const denied = { key: b.key, code: 'AccessDenied', message: 'Access Denied' };
    deleter.deletePage.mockResolvedValue({
      ...markersOn([a, b, c], [a, c], [a, c]),
      objects: 0,
      bytes: 0,
      failures: [denied],
      failedObjects: 1,
      failedBytes: b.size,
    });
    versionListing([markerOver(a, 'null'), markerOver(b, 'b2'), version(b, 'b1')]);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({
      objects: 2,
      bytes: a.size + c.size,
      failed: 1,
    });
  });

  it('counts a key whose listed null version went, though an older version is left under the marker', async () => {
    // Prepare: b's listed version is the null one (20 bytes, written while Suspended) over b1,
    // written while versioning was Enabled; the delete removed the null version.
    const { pageWorker, chains, deleter } = worker();
    const listed = { ...b, modified: Date.parse('2026-03-01T12:00:00Z'), etag: '"e2"' };
    listing([a, listed, c], false);
    deleter.deletePage.mockResolvedValue(markersOn([a, listed, c], [listed], [listed]));
    const older = { ...b, size: 99, modified: Date.parse('2026-02-01T12:00:00Z'), etag: '"e1"' };
    versionListing([markerOver(b, 'null'), version(older, 'b1')]);

    // Act
    await pageWorker.handle(page(0));

    // Assess: all three deleted; b1 is the versioned round's to count
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({ objects: 3, bytes: 60, failed: 0 });
  });

  it('counts no key whose listed version is left, though a write landed on it since (Suspended)', async () => {
    // Prepare: b's listed version is b1, from while versioning was Enabled: the delete laid a
    // null marker over it, which a write of b (a new null version) then replaced.
    const { pageWorker, chains, deleter } = worker();
    const listed = { ...b, modified: Date.parse('2026-02-01T12:00:00Z'), etag: '"e1"' };
    listing([a, listed, c], false);
    deleter.deletePage.mockResolvedValue(markersOn([a, listed, c], [listed], [listed]));
    const landed = { ...b, size: 5, modified: Date.parse('2026-03-01T12:00:05Z'), etag: '"e3"' };
    versionListing([{ ...version(landed, 'null'), latest: true }, version(listed, 'b1')]);

    // Act
    await pageWorker.handle(page(0));

    // Assess: a and c; b1 and the write are the versioned round's
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({
      objects: 2,
      bytes: a.size + c.size,
      failed: 0,
    });
  });

  it('lists no versions of a page whose delete laid no marker', async () => {
    // Prepare
    const { pageWorker, chains } = worker();
    listing([a, b, c], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({ objects: 3, bytes: 60, failed: 0 });
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(0);
  });

  it("records the keys that could not be deleted, under the chain's deletion and round", async () => {
    // Prepare
    const chain = aChain({ round: 2 });
    const { pageWorker, failures, deleter } = worker(chain);
    listing([a, b, c], false);
    const denied = { key: b.key, code: 'AccessDenied', message: 'Access Denied' };
    deleter.deletePage.mockResolvedValue({
      objects: 2,
      bytes: 40,
      failures: [denied],
      failedObjects: 1,
      failedBytes: 20,
      retriedKeys: 0,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    });

    // Act
    await pageWorker.handle({ ...page(0), round: 2 });

    // Assess
    expect(failures.record).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ deletionId: DELETION_ID, round: 2 }),
      [denied],
    );
  });

  it('records the failed keys before it counts the page (a crash in between loses none)', async () => {
    // Prepare
    const { pageWorker, chains, failures, deleter } = worker();
    listing([a, b], false);
    deleter.deletePage.mockResolvedValue({
      objects: 1,
      bytes: 10,
      failures: [{ key: b.key, code: 'AccessDenied', message: 'Access Denied' }],
      failedObjects: 1,
      failedBytes: 20,
      retriedKeys: 0,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    });

    // Act
    await pageWorker.handle(page(0));

    // Assess
    const [recorded] = failures.record.mock.invocationCallOrder;
    const [counted] = chains.completePage.mock.invocationCallOrder;
    expect(recorded).toBeLessThan(counted ?? 0);
  });

  it('records no failures for a page that deleted everything', async () => {
    // Prepare
    const { pageWorker, failures } = worker();
    listing([a, b, c], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(failures.record).not.toHaveBeenCalled();
  });

  it("passes on the deleter's retried keys", async () => {
    // Prepare
    const { pageWorker, deleter } = worker();
    listing([a], false);
    deleter.deletePage.mockResolvedValue({
      objects: 1,
      bytes: 10,
      failures: [],
      failedObjects: 0,
      failedBytes: 0,
      retriedKeys: 4,
      markersLaid: 0,
      markersLaidBytes: 0,
      nullMarkers: [],
    });

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome).toMatchObject({ outcome: 'deleted', retriedKeys: 4 });
  });

  it("refuses a chain whose prefix lies outside the deletion's location", async () => {
    // Prepare
    const { pageWorker, deleter } = worker(aChain({ prefix: 'streams/acme/logs2/1/' }));
    listing([a], false);

    // Act
    const outcome = pageWorker.handle(page(0));

    // Assess
    await expect(outcome).rejects.toThrow(/outside the deletion's location/);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it("refuses a listing that returns a key outside the deletion's location", async () => {
    // Prepare
    const { pageWorker, chains, deleter } = worker();
    listing([a, { key: 'streams/acme/logs2/1/x.json', size: 1 }], false);

    // Act
    const outcome = pageWorker.handle(page(0));

    // Assess
    await expect(outcome).rejects.toThrow(/outside the deletion's location/);
    expect(chains.recordListing).not.toHaveBeenCalled();
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });
});

describe('PageWorker.handle, a page of a versioned chain', () => {
  const versioned = (overrides: Partial<ChainRecord> = {}) =>
    aChain({ versioned: true, ...overrides });

  it("lists versions after the chain's cursor, with S3's key and version markers", async () => {
    // Prepare
    const { pageWorker } = worker(
      versioned({ lastPage: 0, cursor: { key: b.key, versionId: 'v2' } }),
    );
    versionListing([version(b, 'v1'), version(c, 'v1')]);

    // Act
    await pageWorker.handle(page(1));

    // Assess
    expect(s3.commandCalls(ListObjectVersionsCommand).map((call) => call.args[0].input)).toEqual([
      {
        Bucket: BUCKET,
        Prefix: chainPrefix,
        MaxKeys: 3,
        EncodingType: 'url',
        KeyMarker: b.key,
        VersionIdMarker: 'v2',
      },
    ]);
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(0);
  });

  it('records the versions of its last key that the page holds, and the next position', async () => {
    // Prepare: the page ends inside b's versions; b@v1 is the next page's.
    const { pageWorker, chains } = worker(versioned());
    versionListing([version(a, 'v1'), version(b, 'v3'), version(b, 'v2')], {
      key: b.key,
      versionId: 'v2',
    });

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.recordListing).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ versioned: true }),
      0,
      { page: 0, lastKey: b.key, lastKeyVersions: ['v3', 'v2'], count: 3, bytes: 50 },
      { key: b.key, versionId: 'v2' },
      listedAt,
    );
  });

  it('hands the next page on before deleting this one, like a plain chain', async () => {
    // Prepare
    const { pageWorker, queue, deleter } = worker(versioned());
    versionListing([version(a, 'v1'), version(b, 'v3'), version(b, 'v2')], {
      key: b.key,
      versionId: 'v2',
    });

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(1)]);
    const [sent] = queue.send.mock.invocationCallOrder;
    const [deleted] = deleter.deletePage.mock.invocationCallOrder;
    expect(sent).toBeLessThan(deleted ?? 0);
  });

  it('deletes every version and delete marker it listed, by version id', async () => {
    // Prepare
    const marker: ListedObject = { key: c.key, size: 0, versionId: 'm1', marker: true };
    const { pageWorker, deleter } = worker(versioned());
    versionListing([version(a, 'v1'), version(b, 'v1'), marker]);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [
      version(a, 'v1'),
      version(b, 'v1'),
      marker,
    ]);
  });

  it('counts no delete marker as an object of the stream', async () => {
    // Prepare
    const marker: ListedObject = { key: c.key, size: 0, versionId: 'm1', marker: true };
    const { pageWorker, chains } = worker(versioned());
    versionListing([version(a, 'v1'), version(b, 'v1'), marker]);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.recordListing.mock.calls[0]?.[2]).toMatchObject({ count: 2, bytes: 30 });
  });
});

describe('PageWorker.handle, when another delivery already listed the page', () => {
  /** Page 0 was recorded as a, b, c; a was deleted before a crash; d belongs to page 1. */
  const recorded = aPage({ page: 0, lastKey: c.key, count: 3, bytes: 60 });
  const listedAlready = aChain({ lastPage: 0, cursor: { key: c.key }, open: { '0': recorded } });

  /** This delivery read the chain before the other recorded its listing. */
  const raced = (current: ChainRecord | undefined = listedAlready) => {
    const setup = worker(aChain());
    setup.chains.recordListing.mockResolvedValue(duplicate(current));
    listing([b, c, d], true);
    return setup;
  };

  it("deletes only what is left of the recorded page's range", async () => {
    // Prepare
    const { pageWorker, deleter } = raced();

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
  });

  it('counts the recorded page once, not the new listing', async () => {
    // Prepare
    const { pageWorker, chains } = raced();

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      listedAlready,
      recorded,
      { objects: 3, bytes: 60, failed: 0 },
      undefined,
    );
    expect(outcome).toMatchObject({ outcome: 'deleted', objects: 3, bytes: 60 });
  });

  it('resumes from the chain its failed write saw, without reading it again', async () => {
    // Prepare
    const { pageWorker, chains } = raced();

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.get).toHaveBeenCalledTimes(1);
  });

  it('reads the chain again when its failed write saw no item', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = raced();
    chains.recordListing.mockResolvedValue(duplicate());
    chains.get.mockResolvedValueOnce(aChain()).mockResolvedValue(listedAlready);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.get).toHaveBeenCalledTimes(2);
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
  });

  it('is stale when the chain is gone by then', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = raced();
    chains.recordListing.mockResolvedValue(duplicate());
    chains.get.mockResolvedValueOnce(aChain()).mockResolvedValue(undefined);

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome.outcome).toBe('stale');
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('deletes nothing when the recorded page was already counted', async () => {
    // Prepare
    const { pageWorker, deleter } = raced(aChain({ lastPage: 0, cursor: { key: c.key } }));

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome.outcome).toBe('duplicate');
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('reports a duplicate, and settles nothing, when the count was recorded meanwhile', async () => {
    // Prepare
    const { pageWorker, chains, finalizer } = raced();
    chains.completePage.mockResolvedValue(duplicate());

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome.outcome).toBe('duplicate');
    expect(finalizer.settle).not.toHaveBeenCalled();
  });
});

describe('PageWorker.handle, a redelivered page', () => {
  const recorded = aPage({ page: 0, lastKey: c.key, count: 3, bytes: 60 });
  const listedAlready = aChain({ lastPage: 0, cursor: { key: c.key }, open: { '0': recorded } });

  it('resumes without recording its listing again', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = worker(listedAlready);
    listing([b, c, d], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.recordListing).not.toHaveBeenCalled();
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
  });

  it("leaves a key written into the page's range after its listing to the next round", async () => {
    // Prepare: a and b were deleted before the crash; b2 landed after the listing (an ingest
    // admitted before the tombstone, still in flight): it was never the page's.
    const at = Date.parse('2026-03-01T12:00:00.000Z');
    const late = { key: `${chainPrefix}b2.json`, size: 7, modified: at + 60_000 };
    const open = { '0': { ...recorded, listedAt: at } };
    const { pageWorker, chains, deleter } = worker({ ...listedAlready, open });
    listing([late, { ...c, modified: at - 60_000 }, d], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess: c deleted, the page counted whole; b2 is the next round's, which counts it.
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [
      { ...c, modified: at - 60_000 },
    ]);
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      expect.objectContaining({ page: 0, count: 3 }),
      { objects: 3, bytes: 60, failed: 0 },
      undefined,
    );
  });

  it("lists on past late keys that push the page's last keys out of a listing of its size", async () => {
    // Prepare: page 0 was [a, b, c] (pages of 3) and sent back before any delete; a2 landed in
    // its range since (a PUT slow to land), so a listing of 3 from the start ends at b.
    const at = Date.parse('2026-03-01T12:00:00.000Z');
    const early = (listed: ListedObject) => ({ ...listed, modified: at - 60_000 });
    const late = { key: `${chainPrefix}a2.json`, size: 7, modified: at + 60_000 };
    const open = { '0': { ...recorded, listedAt: at } };
    const { pageWorker, chains, deleter } = worker({ ...listedAlready, open }, undefined);
    s3.on(ListObjectsV2Command)
      .resolvesOnce({
        Contents: [early(a), late, early(b)].map(({ key, size, modified }) => ({
          Key: key,
          Size: size,
          LastModified: new Date(modified),
        })),
        IsTruncated: true,
      })
      .resolvesOnce({
        Contents: [early(c), early(d)].map(({ key, size, modified }) => ({
          Key: key,
          Size: size,
          LastModified: new Date(modified),
        })),
        IsTruncated: true,
      });

    // Act
    await pageWorker.handle({ ...page(0), handedOn: true });

    // Assess: the second listing goes on from b; a, b and c are deleted and counted, a2 is not
    const listings = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    expect(listings).toHaveLength(2);
    expect(listings[1]?.StartAfter).toBe(b.key);
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [a, b, c].map(early));
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      expect.objectContaining({ page: 0, count: 3 }),
      { objects: 3, bytes: 60, failed: 0 },
      undefined,
    );
  });

  it('lists a page sent back before its delete once, when nothing landed in it', async () => {
    // Prepare
    const { pageWorker, deleter } = worker(listedAlready);
    listing([a, b, c], true);

    // Act
    await pageWorker.handle({ ...page(0), handedOn: true });

    // Assess
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1);
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [a, b, c]);
  });

  it('counts no key an earlier attempt only hid behind a delete marker (the bucket turned versioned since)', async () => {
    // Prepare: a and b got markers over their versions; c is left; d is past the page
    const { pageWorker, chains, deleter } = worker(listedAlready);
    listing([c, d], true);
    versionListing([
      version(a, 'a1'),
      version(b, 'b1'),
      { ...version(c, 'null'), latest: true },
      { ...version(d, 'null'), latest: true },
      markerOver(a, 'a2'),
      markerOver(b, 'b2'),
    ]);

    // Act
    await pageWorker.handle(page(0));

    // Assess: c deleted and counted; a and b left to the versioned round, which counts them
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [c]);
    expect(s3.commandCalls(ListObjectVersionsCommand)[0]?.args[0].input).toMatchObject({
      Prefix: chainPrefix,
    });
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      expect.objectContaining({ page: 0 }),
      { objects: 1, bytes: c.size, failed: 0 },
      undefined,
    );
  });

  it('counts a key it listed again as its own, whatever marker a duplicate lays on it since', async () => {
    // Prepare: an earlier attempt hid a behind a marker; this one listed b and c again, and a
    // duplicate's delete then laid a marker over b too, before this one read the versions.
    const { pageWorker, chains, deleter } = worker(listedAlready);
    listing([b, c, d], true);
    versionListing([
      markerOver(a, 'a2'),
      version(a, 'a1'),
      markerOver(b, 'b2'),
      version(b, 'b1'),
      { ...version(c, 'null'), latest: true },
    ]);
    deleter.deletePage.mockResolvedValue(markersOn([b, c], [b]));

    // Act
    await pageWorker.handle(page(0));

    // Assess: c deleted; a and b hidden, each left out once (b was counted twice, below zero)
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({
      objects: 1,
      bytes: c.size,
      failed: 0,
    });
  });

  it('takes no marker from before the page was listed for one of its own (that key was never counted)', async () => {
    // Prepare: b was behind a marker when the page was listed (a and c counted); a got one since
    const listedAt = Date.parse('2026-03-01T12:00:00.000Z');
    const recordedTwo = aPage({ page: 0, lastKey: c.key, count: 2, bytes: 40, listedAt });
    const { pageWorker, chains } = worker(
      aChain({ lastPage: 0, cursor: { key: c.key }, open: { '0': recordedTwo } }),
    );
    listing([c, d], true);
    versionListing([
      version(a, 'a1'),
      version(b, 'b1'),
      { ...version(c, 'null'), latest: true },
      markerOver(a, 'a2', listedAt + 4_000),
      markerOver(b, 'b2', listedAt - 60_000),
    ]);

    // Act
    await pageWorker.handle(page(0));

    // Assess: only a's marker is this deletion's
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({
      objects: 1,
      bytes: c.size,
      failed: 0,
    });
  });

  it('counts the keys gone from a page of an unversioned bucket as deleted, and lists versions only then', async () => {
    // Prepare
    const { pageWorker, chains } = worker(listedAlready);
    listing([c, d], true);

    // Act
    await pageWorker.handle(page(0));
    const gone = s3.commandCalls(ListObjectVersionsCommand).length;
    s3.resetHistory();
    s3.on(ListObjectVersionsCommand).resolves({});
    listing([a, b, c, d], true);
    await worker(listedAlready).pageWorker.handle(page(0));

    // Assess
    expect(chains.completePage.mock.calls[0]?.[2]).toEqual({ objects: 3, bytes: 60, failed: 0 });
    expect(gone).toBe(1);
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(0);
  });

  it('lists its range again from where the page started', async () => {
    // Prepare
    const started = aPage({ page: 1, after: { key: a.key }, lastKey: c.key });
    const { pageWorker } = worker(aChain({ lastPage: 1, open: { '1': started } }));
    listing([b, c, d], true);

    // Act
    await pageWorker.handle(page(1));

    // Assess
    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).toMatchObject({
      StartAfter: a.key,
    });
  });

  it('hands on the next page again: the run that listed it may have died first', async () => {
    // Prepare
    const { pageWorker, queue } = worker(listedAlready);
    listing([b, c, d], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(1)]);
  });

  it('hands on the next page again after a listing that held no key but more to list', async () => {
    // Prepare: the run that recorded page 1 empty (its range's keys come later) died before
    // handing on page 2; nothing of page 1 is open.
    const { pageWorker, queue, deleter } = worker(
      aChain({ lastPage: 1, cursor: { key: a.key }, open: {} }),
    );

    // Act
    const outcome = await pageWorker.handle(page(1));

    // Assess
    expect(outcome.outcome).toBe('duplicate');
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(2)]);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('hands on the next page when redelivered after a crash that followed a listing with no key of its range', async () => {
    // Prepare: the range starts at the child `logs/`; `logs-archive/` sorts just before it and
    // fills the page, so the page holds none of the range's keys, and more follow.
    const from = `${location}logs/`;
    const rangeChain = aChain({ prefix: location, range: { from } });
    s3.on(ListObjectsV2Command).resolves({
      Contents: ['1', '2', '3'].map((n) => ({ Key: `${location}logs-archive/${n}`, Size: 1 })),
      IsTruncated: true,
    });
    const { pageWorker, chains, queue } = worker(rangeChain);
    armFailpoint('worker.before-next-page', 'error');
    try {
      await expect(pageWorker.handle(pageMessage(rangeChain, 0))).rejects.toThrow();
    } finally {
      disarmFailpoints();
    }
    const recorded = await chains.recordListing.mock.results[0]?.value;
    chains.get.mockResolvedValue(recorded?.item);

    // Act
    await pageWorker.handle(pageMessage(rangeChain, 0));

    // Assess
    expect(recorded?.item).toMatchObject({ lastPage: 0, ended: false, open: {} });
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([pageMessage(rangeChain, 1)]);
  });

  it.each<[string, ChainRecord, boolean]>([
    ['a later page was listed already', aChain({ lastPage: 2, cursor: { key: b.key } }), false],
    ['the chain ended with that page', aChain({ lastPage: 1, ended: true }), false],
    ['the message says it was handed on', aChain({ lastPage: 1, cursor: { key: a.key } }), true],
  ])('hands on no next page for a page not open when %s', async (_, chain, handedOn) => {
    // Prepare
    const { pageWorker, queue } = worker(chain);

    // Act
    await pageWorker.handle({ ...page(1), ...(handedOn ? { handedOn } : {}) });

    // Assess
    expect(queue.send).not.toHaveBeenCalled();
  });

  it.each<[string, ChainRecord]>([
    [
      'a later page was listed already',
      aChain({ lastPage: 1, open: { '0': recorded, '1': aPage({ page: 1 }) } }),
    ],
    [
      'the chain ended with this page',
      aChain({ lastPage: 0, ended: true, open: { '0': recorded } }),
    ],
  ])('hands on no next page when %s', async (_, chain) => {
    // Prepare
    const { pageWorker, queue } = worker(chain);
    listing([b, c], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(queue.send).not.toHaveBeenCalled();
  });
});

describe.each<[string, Pick<PageRecord, 'lastKeyVersions'>, ListedObject, boolean]>([
  ['a key before the last one', { lastKeyVersions: ['v3'] }, version(b, 'v1'), true],
  [
    'a version of the last key that the page holds',
    { lastKeyVersions: ['v3'] },
    version(c, 'v3'),
    true,
  ],
  [
    'a version of the last key that the next page holds',
    { lastKeyVersions: ['v3'] },
    version(c, 'v2'),
    false,
  ],
  ['a key after the last one', { lastKeyVersions: ['v3'] }, version(d, 'v1'), false],
  ['the last key of a plain page', {}, c, true],
  ['a key after the last one of a plain page', {}, d, false],
])('a resumed page, relisting %s', (_, versions, entry, kept) => {
  it(kept ? 'deletes it' : 'leaves it to its own page', async () => {
    // Prepare
    const versioned = entry.versionId !== undefined;
    const recorded = aPage({ page: 0, lastKey: c.key, count: 3, bytes: 60, ...versions });
    const { pageWorker, deleter } = worker(
      aChain({ versioned, lastPage: 0, ended: true, open: { '0': recorded } }),
    );
    if (versioned) versionListing([entry]);
    else listing([entry], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, kept ? [entry] : []);
  });
});

describe('PageWorker.handle, at the end of a chain', () => {
  it('hands the chain, as counted, to the finalizer to settle', async () => {
    // Prepare
    const { pageWorker, chains, finalizer } = worker();
    listing([a, b], false);
    const ended = aChain({ lastPage: 0, ended: true, open: {} });
    chains.completePage.mockResolvedValue(ok(ended));

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(finalizer.settle).toHaveBeenCalledExactlyOnceWith(ended);
  });

  it('settles a chain whose listing came back empty, and deletes nothing', async () => {
    // Prepare
    const { pageWorker, chains, deleter, finalizer } = worker();
    listing([], false);

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome.outcome).toBe('chain-ended');
    expect(chains.recordListing).toHaveBeenCalledExactlyOnceWith(
      aChain(),
      0,
      undefined,
      undefined,
      listedAt,
    );
    expect(finalizer.settle).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ lastPage: 0, ended: true }),
    );
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('settles, through the finalizer, when a redelivery finds the page counted already', async () => {
    // Prepare: the run that counted the last page died before settling.
    const chain = aChain({ lastPage: 0, ended: true, settled: false });
    const { pageWorker, finalizer, deleter } = worker(chain);

    // Act
    const outcome = await pageWorker.handle(page(0));

    // Assess
    expect(outcome.outcome).toBe('duplicate');
    expect(finalizer.settle).toHaveBeenCalledExactlyOnceWith(chain);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });
});

describe('PageWorker.handle, a finalize message', () => {
  describe.each<[string, DeletionRecord | undefined]>([
    ['a missing deletion', undefined],
    ['a PENDING deletion', aDeletion({ state: 'PENDING' })],
    ['a COMPLETED deletion', aDeletion({ state: 'COMPLETED' })],
    ['a FAILED deletion', aDeletion({ state: 'FAILED' })],
    ['another generation', aDeletion({ generation: 2 })],
    ['another round', aDeletion({ round: 2 })],
  ])('for %s', (_, deletion) => {
    it('is stale and finalizes nothing', async () => {
      // Prepare
      const { pageWorker, deletions, finalizer } = worker();
      deletions.get.mockResolvedValue(deletion);

      // Act
      const outcome = await pageWorker.handle(finalize);

      // Assess
      expect(outcome.outcome).toBe('stale');
      expect(finalizer.finalize).not.toHaveBeenCalled();
    });
  });

  it('finalizes the running round it names, and reports the result', async () => {
    // Prepare
    const deletion = aDeletion({ stream: 'clicks' });
    const { pageWorker, deletions, finalizer } = worker();
    deletions.get.mockResolvedValue(deletion);
    finalizer.finalize.mockResolvedValue('next-round');

    // Act
    const outcome = await pageWorker.handle(finalize);

    // Assess
    expect(finalizer.finalize).toHaveBeenCalledExactlyOnceWith(deletion);
    expect(outcome).toEqual({ outcome: 'finalize', result: 'next-round' });
  });
});

describe('PageWorker.handle, a chain S3 slows down', () => {
  const NOW = Date.parse('2026-12-02T00:00:00Z');
  // A chain with a pace, its slot (if any) in the future: a sleep would never end it.
  const paced = (overrides: Partial<ChainRecord> = {}) =>
    worker(aChain({ pace: 3, ...overrides }), undefined, {
      clock: clockOf(() => new Date(NOW)),
      sleep: async () => {
        throw new Error('slept with a clock that stands still');
      },
    });

  it('slows the chain, and sends the open page back for its slot, when S3 answers SlowDown', async () => {
    // Prepare: an listedAt chain (pageSize 3) whose first DeleteObjects is refused.
    const { pageWorker, chains, deleter, queue } = worker(aChain(), undefined, {
      clock: clockOf(() => new Date(NOW)),
    });
    listing([a, b, c], false);
    deleter.deletePage.mockRejectedValueOnce(new SlowDownError('SlowDown'));

    // Act
    const result = await pageWorker.handle(page(0));

    // Assess: half a page a second (1.5 keys/s): the slot two seconds on, the page again a
    // second before it (whole seconds, up to 1.5 s early), nothing counted.
    expect(result).toEqual({ outcome: 'slowed', seconds: 1, pace: 2 });
    expect(chains.slowDown).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      { pace: 1.5, retrySeconds: 1, nextAt: NOW + 2000, cutAt: NOW },
      undefined,
    );
    expect(queue.send).toHaveBeenCalledWith([{ ...page(0), handedOn: true }], 1);
    expect(chains.completePage).not.toHaveBeenCalled();
  });

  it('hands on no second copy of the next page when a page sent back returns', async () => {
    // Prepare: page 1 is open and the chain's last listed page; S3 refused it once.
    const open = aPage({ page: 1, lastKey: c.key });
    const { pageWorker, queue, deleter } = paced({ lastPage: 1, open: { '1': open } });
    listing([a, b, c], true);

    // Act
    await pageWorker.handle({ ...page(1), handedOn: true });

    // Assess: deleted, and nothing sent: page 2 was handed on before the refusal.
    expect(deleter.deletePage).toHaveBeenCalledOnce();
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('sends a redelivered page back for its slot marked as handed on, so its return hands on nothing again', async () => {
    // Prepare: page 1 is open and the last listed page; its slot is 3 s away.
    const open = aPage({ page: 1, lastKey: c.key });
    const { pageWorker, queue, deleter } = paced({
      lastPage: 1,
      open: { '1': open },
      nextAt: NOW + 3000,
    });

    // Act
    const result = await pageWorker.handle(page(1));

    // Assess: page 2 handed on once (the run that listed page 1 may have died first), and
    // page 1 back for its slot, marked.
    expect(result).toEqual({ outcome: 'deferred', seconds: 2 });
    expect(queue.send.mock.calls.map(([messages]) => messages)).toEqual([
      [page(2)],
      [{ ...page(1), handedOn: true }],
    ]);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it('cuts the pace of a paced chain, and remembers the pace S3 refused', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = paced({ pace: 20, ceiling: 25 });
    listing([a, b, c], true);
    deleter.deletePage.mockRejectedValueOnce(new SlowDownError('SlowDown'));

    // Act
    await pageWorker.handle(page(0));

    // Assess: probing, the refused pace is one small rise below the chain's, and the pace goes
    // just under the one a rise below that (lib/pipeline/pace.ts).
    const rise = 1 + PACE.probe;
    expect(chains.slowDown.mock.calls[0]?.[1]).toMatchObject({
      pace: expect.closeTo((20 / rise ** 2) * PACE.cut),
      ceiling: expect.closeTo(20 / rise),
    });
  });

  it('lets any other failure of the deleter through, so the message is redelivered', async () => {
    // Prepare
    const { pageWorker, chains, deleter } = paced();
    listing([a], false);
    deleter.deletePage.mockRejectedValueOnce(new Error('keys still failing'));

    // Act, Assess
    await expect(pageWorker.handle(page(0))).rejects.toThrow('keys still failing');
    expect(chains.slowDown).not.toHaveBeenCalled();
  });

  it("defers the page's message, listing nothing, when the chain's slot is 1.5 s or more away", async () => {
    // Prepare
    const { pageWorker, queue, chains } = paced({ nextAt: NOW + 3000 });

    // Act
    const result = await pageWorker.handle(page(0));

    // Assess: back in whole seconds, 0.5 to 1.5 s before its slot, to list and then wait.
    expect(result).toEqual({ outcome: 'deferred', seconds: 2 });
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(0)], 2);
    expect(chains.recordListing).not.toHaveBeenCalled();
  });

  it('lists at once when its slot is less than 1.5 s away, takes it half a slot before it comes, and deletes at its time', async () => {
    // Prepare: a clock that the sleep moves on.
    let now = NOW;
    const sleep = vi.fn(async (ms: number) => {
      now += ms;
    });
    const chain = aChain({ pace: 3, nextAt: NOW + 400 });
    const { pageWorker, chains, deleter } = worker(chain, undefined, {
      clock: clockOf(() => new Date(now)),
      sleep,
    });
    listing([a], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess: listed before the sleep; the slot (a key's time, 333 ms) taken half of it before
    // it comes, the next a key's time on; the delete at the slot, after the rest is slept out.
    expect(chains.recordListing.mock.invocationCallOrder[0]).toBeLessThan(
      sleep.mock.invocationCallOrder[0] ?? 0,
    );
    expect(sleep.mock.calls.map(([ms]) => ms)).toEqual([
      expect.closeTo(400 - 500 / 3, 0),
      expect.closeTo(500 / 3, 0),
    ]);
    expect(chains.takeSlot).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ chainId: chain.chainId, nextAt: NOW + 400 }),
      NOW + 400 + 1000 / 3,
    );
    expect(chains.takeSlot.mock.invocationCallOrder[0]).toBeLessThan(
      sleep.mock.invocationCallOrder[1] ?? 0,
    );
    expect(sleep.mock.invocationCallOrder[1]).toBeLessThan(
      deleter.deletePage.mock.invocationCallOrder[0] ?? 0,
    );
    expect(now).toBeCloseTo(NOW + 400, 0);
  });

  it('deletes a slot after the last delete as it went, when that went late, and records when its own went', async () => {
    // Prepare: the slot is at +400 ms, but the page before went at +300 ms (late for its own
    // slot at +67 ms): 3 keys a second, a key's time (333 ms) after it is +633 ms.
    let now = NOW;
    const chain = aChain({ pace: 3, nextAt: NOW + 400 });
    const { pageWorker, chains, deleter } = worker(chain, undefined, {
      clock: clockOf(() => new Date(now)),
      sleep: async (ms) => {
        now += ms;
      },
    });
    listing([a], false);
    chains.takeSlot.mockImplementationOnce(async (current, next) => ({
      ...current,
      nextAt: next,
      sentAt: NOW + 300,
    }));

    // Act
    await pageWorker.handle(page(0));

    // Assess: the delete waits out the slot after the last one, not just its own (nothing
    // sleeps after it); its completion records when it went, and the pace's rise.
    expect(deleter.deletePage).toHaveBeenCalledOnce();
    expect(now).toBeCloseTo(NOW + 300 + 1000 / 3, 0);
    expect(chains.completePage).toHaveBeenCalledWith(
      expect.anything(),
      expect.anything(),
      expect.anything(),
      { rise: expect.closeTo(3 * PACE.rampUp), sentAt: Math.floor(now) },
    );
  });

  it('reads the chain again when another page took the slot, and sends the page back when the next is 1.5 s or more away', async () => {
    // Prepare: the slot is taken by another page; by the second read, a refusal moved it 3 s on.
    let now = NOW;
    const { pageWorker, chains, queue, deleter } = worker(
      aChain({ pace: 3, nextAt: NOW + 400 }),
      undefined,
      {
        clock: clockOf(() => new Date(now)),
        sleep: async (ms) => {
          now += ms;
        },
      },
    );
    listing([a], false);
    chains.takeSlot.mockResolvedValueOnce(undefined);
    chains.get.mockResolvedValueOnce(aChain({ pace: 3, nextAt: NOW + 400 }));
    chains.get.mockResolvedValueOnce(aChain({ pace: 2, nextAt: NOW + 3400, lastPage: 0 }));

    // Act
    const result = await pageWorker.handle(page(0));

    // Assess: listed and recorded, not deleted; back up to 1.5 s before the slot (in 2 s), not
    // to hand on page 1 again.
    expect(result).toEqual({ outcome: 'deferred', seconds: 2 });
    expect(queue.send).toHaveBeenCalledWith([{ ...page(0), handedOn: true }], 2);
    expect(chains.recordListing).toHaveBeenCalledOnce();
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });

  it("takes the slot and the next one, and delays the next page's message to it", async () => {
    // Prepare: 3 keys a second, 3 keys listed: the next page a second later.
    const { pageWorker, chains, queue } = paced({ pace: 1.5 });
    listing([a, b, c], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess: 3 keys at 1.5 keys/s: the next slot two seconds later, its page a second sooner.
    expect(chains.takeSlot).toHaveBeenCalledExactlyOnceWith(expect.anything(), NOW + 2000);
    expect(queue.send).toHaveBeenCalledWith([page(1)], 1);
  });

  it('sizes the slot of a page of delete markers by the keys it sends: S3 counts them too', async () => {
    // Prepare: a versioned chain at 1.5 keys/s lists three delete markers (counted as none).
    const { pageWorker, chains } = paced({ pace: 1.5, versioned: true });
    versionListing(
      [a, b, c].map((listed, n) => ({
        key: listed.key,
        size: 0,
        versionId: `m${n}`,
        marker: true,
      })),
    );

    // Act
    await pageWorker.handle(page(0));

    // Assess: three keys sent at 1.5 keys/s take two seconds, not none.
    expect(chains.takeSlot).toHaveBeenCalledExactlyOnceWith(expect.anything(), NOW + 2000);
  });

  it('raises the pace of a paced chain by each page S3 admits', async () => {
    // Prepare
    const { pageWorker, chains } = paced({ pace: 100 });
    listing([a], false);

    // Act
    await pageWorker.handle(page(0));

    // Assess: before any paced refusal the pace ramps up (5% a page).
    expect(chains.completePage.mock.calls[0]?.[3]?.rise).toBeCloseTo(5);
  });

  describe('an unpaced chain whose page before this one is still open (pipelined)', () => {
    const before = aPage({ page: 0, lastKey: a.key, count: 1, bytes: 10 });
    const chain = aChain({ lastPage: 0, cursor: { key: a.key }, open: { '0': before } });
    const pipelined = () => {
      let now = NOW;
      const sleep = vi.fn(async (ms: number) => {
        now += ms;
      });
      const setup = worker(chain, undefined, { clock: clockOf(() => new Date(now)), sleep });
      listing([b, c], false);
      return { ...setup, sleep };
    };

    it('deletes once the page before was admitted, reading the chain again to see it', async () => {
      // Prepare: the first look again still finds page 0 open; the second, closed.
      const { pageWorker, chains, deleter, sleep } = pipelined();
      chains.get.mockResolvedValueOnce(chain).mockResolvedValueOnce(chain);
      chains.get.mockResolvedValueOnce(aChain({ lastPage: 1, open: {} }));

      // Act
      const result = await pageWorker.handle(page(1));

      // Assess
      expect(result).toMatchObject({ outcome: 'deleted', objects: 2 });
      expect(sleep.mock.calls).toEqual([[PACE.inTurnPollMs], [PACE.inTurnPollMs]]);
      expect(chains.get).toHaveBeenCalledTimes(3);
      expect(chains.get.mock.invocationCallOrder[2]).toBeLessThan(
        deleter.deletePage.mock.invocationCallOrder[0] ?? 0,
      );
    });

    it('follows the pace instead when S3 refused the page before meanwhile', async () => {
      // Prepare: page 0 was refused: still open, and the chain paced with its slot 3 s on.
      const { pageWorker, chains, deleter, queue } = pipelined();
      chains.get.mockResolvedValueOnce(chain);
      chains.get.mockResolvedValueOnce({ ...chain, lastPage: 1, pace: 2, nextAt: NOW + 3050 });

      // Act
      const result = await pageWorker.handle(page(1));

      // Assess: not deleted into the refusal; back for its slot, its next page handed on.
      expect(result).toEqual({ outcome: 'deferred', seconds: 2 });
      expect(deleter.deletePage).not.toHaveBeenCalled();
      expect(queue.send).toHaveBeenCalledWith([{ ...page(1), handedOn: true }], 2);
    });

    it('does not wait for a page listed longer than PACE.inTurnMs ago (its worker died)', async () => {
      // Prepare: page 0 was listed ten minutes ago and never closed.
      const stale = { ...before, listedAt: NOW - 600_000 };
      let now = NOW;
      const sleep = vi.fn(async (ms: number) => {
        now += ms;
      });
      const { pageWorker, deleter } = worker({ ...chain, open: { '0': stale } }, undefined, {
        clock: clockOf(() => new Date(now)),
        sleep,
      });
      listing([b, c], false);

      // Act
      await pageWorker.handle(page(1));

      // Assess
      expect(sleep).not.toHaveBeenCalled();
      expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
    });

    it('waits no longer than PACE.inTurnMs for a page that stays open (its worker died)', async () => {
      // Prepare: page 0 never closes.
      const { pageWorker, deleter, sleep } = pipelined();

      // Act
      await pageWorker.handle(page(1));

      // Assess
      expect(sleep).toHaveBeenCalledTimes(PACE.inTurnMs / PACE.inTurnPollMs);
      expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(BUCKET, [b, c]);
    });
  });

  it('records no pace and delays nothing for a chain S3 never slowed down', async () => {
    // Prepare
    const { pageWorker, chains, queue } = worker(aChain(), undefined, {
      clock: clockOf(() => new Date(NOW)),
    });
    listing([a, b, c], true);

    // Act
    await pageWorker.handle(page(0));

    // Assess
    expect(chains.recordListing.mock.calls[0]?.[4]).toBe(NOW);
    expect(chains.takeSlot).not.toHaveBeenCalled();
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([page(1)]);
    expect(chains.completePage.mock.calls[0]?.[3]).toBeUndefined();
  });
});

describe('PageWorker.deleteListed, a first page the dispatcher listed', () => {
  const record = aPage({ page: 0, lastKey: b.key, count: 2, bytes: 30 });
  const opened = aChain({ lastPage: 0, ended: true, open: { '0': record } });

  it('deletes and counts it without listing, and settles its chain', async () => {
    // Prepare
    const { pageWorker, deleter, chains, finalizer } = worker(opened);

    // Act
    const result = await pageWorker.deleteListed(opened, record, [a, b]);

    // Assess
    expect(result).toMatchObject({ outcome: 'deleted', objects: 2, bytes: 30 });
    expect(s3.calls()).toHaveLength(0);
    expect(deleter.deletePage).toHaveBeenCalledExactlyOnceWith(opened.bucket, [a, b]);
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      opened,
      record,
      { objects: 2, bytes: 30, failed: 0 },
      undefined,
    );
    expect(finalizer.settle).toHaveBeenCalledOnce();
  });

  it("sends it to the queue, to be listed again in its time, when the bucket's key budget has no room", async () => {
    // Prepare
    const take = vi.fn(async () => 3);
    const giveBack = vi.fn(async () => {});
    const { pageWorker, deleter, queue } = worker(opened, { take, giveBack });

    // Act
    const result = await pageWorker.deleteListed(opened, record, [a, b]);

    // Assess: its next page was handed on with it, so the message says so.
    expect(result).toEqual({ outcome: 'deferred', seconds: 3 });
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([{ ...page(0), handedOn: true }], 3);
    expect(deleter.deletePage).not.toHaveBeenCalled();
    expect(giveBack).not.toHaveBeenCalled();
  });

  it('gives back to the budget what the page did not hold of a whole page', async () => {
    // Prepare
    const take = vi.fn(async () => 0);
    const giveBack = vi.fn(async () => {});
    const { pageWorker, deleter } = worker(opened, { take, giveBack });

    // Act
    await pageWorker.deleteListed(opened, record, [a, b]);

    // Assess
    expect(giveBack).toHaveBeenCalledExactlyOnceWith(opened.bucket, 2);
    expect(deleter.deletePage).toHaveBeenCalledOnce();
  });

  it('refuses a key outside the deletion’s location, deleting nothing', async () => {
    // Prepare
    const { pageWorker, deleter } = worker(opened);
    const stray = { key: 'streams/acme/other/1/a', size: 1 };

    // Act
    const attempt = pageWorker.deleteListed(opened, record, [a, stray]);

    // Assess
    await expect(attempt).rejects.toThrow(/outside the deletion's location/);
    expect(deleter.deletePage).not.toHaveBeenCalled();
  });
});
