import {
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChainRecord,
  clockOf,
  done,
  duplicate,
  ok,
  type PageRecord,
} from '../../../lib/core/index.ts';
import type { FinalizerOptions } from '../../../lib/pipeline/finalizer.ts';
import { type DeletionEvents, Finalizer } from '../../../lib/pipeline/index.ts';
import type { ChainStore, DeletionStore, UploadStore } from '../../../lib/store/index.ts';
import { aChain, aDeletion, aPage, NOW } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const stalled = { code: 'Stalled', message: 'no progress after 5 attempts' };
const location = 'streams/acme/logs/1/';

/** S3's answer to a request it refuses, or fails, as the SDK throws it. */
const s3Error = (name: string, fault: 'client' | 'server') =>
  new S3ServiceException({ name, $fault: fault, $metadata: {}, message: `${name} (test)` });

/**
 * Two chains of a stalled deletion, each with a page listed and never counted, as an earlier
 * verdict stopped them (a stale interval ago).
 */
const chainA = aChain({
  chainId: 'a'.repeat(20),
  prefix: `${location}dt=2026-01-01/`,
  stopped: true,
  lastPage: 0,
  open: { '0': aPage({ page: 0, lastKey: `${location}dt=2026-01-01/z`, count: 3, bytes: 30 }) },
});
const chainB = aChain({
  chainId: 'b'.repeat(20),
  prefix: `${location}dt=2026-01-02/`,
  stopped: true,
  lastPage: 0,
  open: { '0': aPage({ page: 0, lastKey: `${location}dt=2026-01-02/z`, count: 2, bytes: 20 }) },
});

function finalizer(chainsOfDeletion: ChainRecord[]) {
  const deletions = {
    claimVerification: vi.fn<DeletionStore['claimVerification']>(async () => duplicate()),
    complete: vi.fn<DeletionStore['complete']>(async () => done),
    fail: vi.fn<DeletionStore['fail']>(async () => done),
    nextRound: vi.fn<DeletionStore['nextRound']>(async () => done),
    heartbeat: vi.fn<DeletionStore['heartbeat']>(async () => duplicate()),
  } satisfies FinalizerOptions['deletions'];
  const chains = {
    settle: vi.fn<ChainStore['settle']>(async () => done),
    totals: vi.fn<ChainStore['totals']>(async () => ({
      objectsDeleted: 0,
      bytesDeleted: 0,
      failedObjects: 0,
    })),
    all: vi.fn<ChainStore['all']>(async () => chainsOfDeletion),
    completePage: vi.fn<ChainStore['completePage']>(async () => duplicate()),
    stop: vi.fn<ChainStore['stop']>(async (chain) => ok(chain)),
  } satisfies FinalizerOptions['chains'];
  const uploads = {
    record: vi.fn<UploadStore['record']>(async () => {}),
    aborted: vi.fn<UploadStore['aborted']>(async () => {}),
    count: vi.fn<UploadStore['count']>(async () => 0),
  } satisfies FinalizerOptions['uploads'];
  const events = { ended: vi.fn(), resumed: vi.fn() } satisfies DeletionEvents;
  const subject = new Finalizer({
    deletions,
    chains,
    streams: { find: vi.fn(async () => undefined) },
    uploads,
    s3: new S3Client({ region: 'us-east-1' }),
    queue: { send: vi.fn(async () => {}) },
    events,
    ingestGraceSeconds: 30,
    clock: clockOf(() => NOW),
  });
  return { subject, deletions, chains, events };
}

beforeEach(() => {
  s3.reset();
});

describe('Finalizer.fail, when S3 refuses to list what a stalled deletion left open', () => {
  it.each(['AccessDenied', 'NoSuchBucket'])(
    'still ends it FAILED (%s): a refusal for good must not keep it RUNNING for ever',
    async (code) => {
      // Prepare
      s3.on(ListObjectsV2Command).rejects(s3Error(code, 'client'));
      const { subject, deletions, events } = finalizer([chainA]);
      const claimed = aDeletion({ attempts: 6, stalls: 5 });

      // Act
      const outcome = await subject.fail(claimed, stalled);

      // Assess
      expect(outcome).toBe('failed');
      expect(deletions.fail).toHaveBeenCalledExactlyOnceWith(
        expect.objectContaining({ deletionId: claimed.deletionId }),
        stalled,
      );
      expect(events.ended).toHaveBeenCalledOnce();
    },
  );

  it('leaves a page it cannot look at uncounted, and still closes the pages it can', async () => {
    // Prepare: S3 refuses the first chain's partition, and lists the second one's empty.
    s3.on(ListObjectsV2Command)
      .rejects(s3Error('AccessDenied', 'client'))
      .on(ListObjectsV2Command, { Prefix: chainB.prefix })
      .resolves({ IsTruncated: false });
    // No delete marker hides any of its keys: they were deleted.
    s3.on(ListObjectVersionsCommand, { Prefix: chainB.prefix }).resolves({ IsTruncated: false });
    const { subject, chains } = finalizer([chainA, chainB]);

    // Act
    const outcome = await subject.fail(aDeletion({ stalls: 5 }), stalled);

    // Assess: the second page is gone whole, so it counts whole; the first is not guessed at.
    expect(outcome).toBe('failed');
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(chainB, chainB.open['0'], {
      objects: 2,
      bytes: 20,
      failed: 0,
    });
  });

  it('closes no page of an earlier round, which the rounds since listed and counted again', async () => {
    // Prepare: round 1's verdict could not list chain A's page (left open); a retry's round 2
    // deleted and counted its keys, then stalled too. Its own chain B has a page to close.
    s3.on(ListObjectsV2Command).resolves({ IsTruncated: false });
    s3.on(ListObjectVersionsCommand).resolves({ IsTruncated: false });
    const { subject, chains } = finalizer([
      { ...chainA, round: 1 },
      { ...chainB, round: 2 },
    ]);

    // Act
    const outcome = await subject.fail(aDeletion({ round: 2, stalls: 5 }), stalled);

    // Assess: only round 2's page is counted
    expect(outcome).toBe('failed');
    expect(chains.completePage).toHaveBeenCalledExactlyOnceWith(
      { ...chainB, round: 2 },
      chainB.open['0'],
      { objects: 2, bytes: 20, failed: 0 },
    );
  });

  it('gives up nothing on an error that may pass (the next sweep tries again)', async () => {
    // Prepare
    s3.on(ListObjectsV2Command).rejects(s3Error('InternalError', 'server'));
    const { subject, deletions } = finalizer([chainA]);

    // Act
    const failing = subject.fail(aDeletion({ stalls: 5 }), stalled);

    // Assess
    await expect(failing).rejects.toThrow(/InternalError/);
    expect(deletions.fail).not.toHaveBeenCalled();
  });
});

describe('Finalizer.fail, closing a page whose range holds keys written after its listing', () => {
  const listedAt = Date.parse('2026-03-01T12:00:00.000Z');
  const page = { ...chainA.open['0'], listedAt } as PageRecord;
  const chain = { ...chainA, open: { '0': page } };

  /**
   * Closes chain A's page (three keys of 10 bytes, none deleted) over a listing of them and of
   * `late`, a key of `size` bytes written `afterMs` after the page was listed: what it counts.
   */
  async function countedWith(late: { name: string; size: number; afterMs: number }) {
    const before = new Date(listedAt - 60_000);
    const key = (name: string) => `${chain.prefix}${name}`;
    s3.on(ListObjectsV2Command).resolves({
      Contents: [
        ...['a', 'b', 'x'].map((name) => ({ Key: key(name), Size: 10, LastModified: before })),
        { Key: key(late.name), Size: late.size, LastModified: new Date(listedAt + late.afterMs) },
      ].sort((one, other) => one.Key.localeCompare(other.Key)),
      IsTruncated: false,
    });
    const { subject, chains } = finalizer([chain]);
    await subject.fail(aDeletion({ stalls: 5 }), stalled);
    expect(chains.completePage).toHaveBeenCalledOnce();
    return chains.completePage.mock.calls[0]?.slice(0, 3);
  }

  it('counts only what is gone of the page, the late key apart', async () => {
    // Act: a fourth key landed in its range a minute after it was listed (an ingest admitted
    // before the tombstone, still in flight then)
    const counted = await countedWith({ name: 'late', size: 99, afterMs: 60_000 });

    // Assess
    expect(counted).toEqual([chain, page, { objects: 0, bytes: 0, failed: 0 }]);
  });

  it('counts nothing, never less, when a key written after the listing looks like one of its own', async () => {
    // Act: the fourth key landed within the clock margin of the listing, so it cannot be told
    // from the page's: four keys left of a page of three
    const counted = await countedWith({ name: 'y', size: 10, afterMs: 1000 });

    // Assess
    expect(counted).toEqual([chain, page, { objects: 0, bytes: 0, failed: 0 }]);
  });
});

describe('Finalizer.fail, against stragglers of the attempts it gives up', () => {
  it('stops each chain of its round, and with pages open gives its verdict at the next sweep', async () => {
    // Prepare: a worker that read the chain before its stop may still be deleting its page.
    const running = { ...chainA, stopped: false };
    const { subject, chains, deletions } = finalizer([running, { ...chainB, stopped: false }]);

    // Act
    const outcome = await subject.fail(aDeletion({ stalls: 5 }), stalled);

    // Assess: nothing is listed, counted or written FAILED before that worker is done.
    expect(outcome).toBe('delayed');
    expect(chains.stop.mock.calls.map(([chain]) => chain.chainId)).toEqual([
      chainA.chainId,
      chainB.chainId,
    ]);
    expect(s3.calls()).toHaveLength(0);
    expect(chains.completePage).not.toHaveBeenCalled();
    expect(deletions.fail).not.toHaveBeenCalled();
  });

  it('ends at once a round whose chains it stops with no page open', async () => {
    // Prepare
    const quiet = aChain({ chainId: 'q'.repeat(20), lastPage: 3 });
    const { subject, chains, deletions } = finalizer([quiet]);

    // Act
    const outcome = await subject.fail(aDeletion({ stalls: 5 }), stalled);

    // Assess
    expect(outcome).toBe('failed');
    expect(chains.stop).toHaveBeenCalledExactlyOnceWith(quiet);
    expect(deletions.fail).toHaveBeenCalledOnce();
  });

  it('closes every page of a chain an earlier verdict stopped, a page opened before the stop included', async () => {
    // Prepare: a straggler listed page 1 of the chain just before it was stopped.
    const page1 = aPage({
      page: 1,
      after: { key: `${location}dt=2026-01-01/z` },
      lastKey: `${location}dt=2026-01-01/zz`,
      count: 4,
    });
    const stopped = { ...chainA, lastPage: 1, open: { ...chainA.open, '1': page1 } };
    s3.on(ListObjectsV2Command).resolves({ IsTruncated: false });
    s3.on(ListObjectVersionsCommand).resolves({ IsTruncated: false });
    const { subject, chains } = finalizer([stopped]);

    // Act
    const outcome = await subject.fail(aDeletion({ stalls: 6 }), stalled);

    // Assess
    expect(outcome).toBe('failed');
    expect(chains.stop).not.toHaveBeenCalled();
    expect(chains.completePage.mock.calls.map(([, page]) => page.page)).toEqual([0, 1]);
    expect(chains.completePage).toHaveBeenCalledWith(stopped, page1, {
      objects: 4,
      bytes: page1.bytes,
      failed: 0,
    });
  });

  it('does not stop the chains of an earlier round, which ended before this one began', async () => {
    // Prepare
    const earlier = aChain({ chainId: 'e'.repeat(20), round: 1, ended: true, settled: true });
    const { subject, chains } = finalizer([earlier]);

    // Act
    await subject.fail(aDeletion({ round: 2, stalls: 5 }), stalled);

    // Assess
    expect(chains.stop).not.toHaveBeenCalled();
  });
});
