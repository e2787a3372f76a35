import { ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { Finalizer, isReadyToVerify } from '../../lib/finalizer.ts';
import type { DeletionRecord, StreamRecord } from '../../lib/model.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import type { WorkQueue } from '../../lib/work-queue.ts';
import { fake } from '../helpers/fakes.ts';
import { aDeletion, aStream, DELETION_ID, NOW } from '../helpers/records.ts';

const s3 = mockClient(S3Client);
const ready = (overrides: Partial<DeletionRecord> = {}) =>
  aDeletion({ chainsTotal: 2, chainsSettled: 2, ...overrides });

let totals = { objectsDeleted: 0, bytesDeleted: 0, failedObjects: 0 };

function finalizer(
  stream: StreamRecord | undefined = aStream({ state: 'DELETING', deletionId: DELETION_ID }),
) {
  const store = {
    getDeletion: vi.fn<ProgressStore['getDeletion']>(),
    getStream: vi.fn<ProgressStore['getStream']>(async () => stream),
    totals: vi.fn<ProgressStore['totals']>(async () => totals),
    complete: vi.fn<ProgressStore['complete']>(async () => 'recorded'),
    fail: vi.fn<ProgressStore['fail']>(async () => 'recorded'),
    nextRound: vi.fn<ProgressStore['nextRound']>(async () => 'recorded'),
    claimVerification: vi.fn<ProgressStore['claimVerification']>(async () => true),
  };
  const queue = { send: vi.fn<WorkQueue['send']>(async () => {}) };
  const subject = new Finalizer({
    store: fake<ProgressStore>(store),
    s3: new S3Client({ region: 'us-east-1' }),
    queue: fake<WorkQueue>(queue),
    ingestGraceSeconds: 30,
    maxRounds: 3,
    now: () => NOW,
  });
  return { subject, store, queue };
}

/** What verification sees: current objects of an unversioned bucket (version id `null`). */
const listing = (keys: string[]) =>
  s3.on(ListObjectVersionsCommand).resolves({
    Versions: keys.map((Key) => ({ Key, Size: 1, VersionId: 'null' })),
    IsTruncated: false,
  });

describe('Finalizer', () => {
  beforeEach(() => {
    s3.reset();
    totals = { objectsDeleted: 0, bytesDeleted: 0, failedObjects: 0 };
  });

  it.each([
    ['a chain has not settled (ended with no page open)', { chainsSettled: 1 }],
    ['the deletion is not running', { state: 'PENDING' as const }],
  ])('does nothing while %s', async (_, overrides) => {
    const { subject, store } = finalizer();

    const outcome = await subject.finalize(ready(overrides));

    expect(outcome).toBe('not-ready');
    expect(s3.calls()).toHaveLength(0);
    expect(store.complete).not.toHaveBeenCalled();
  });

  it('completes when one listing of the whole location comes back empty', async () => {
    listing([]);
    totals = { objectsDeleted: 2_000, bytesDeleted: 40_000, failedObjects: 0 };
    const { subject, store } = finalizer();

    const outcome = await subject.finalize(ready());

    expect(outcome).toBe('completed');
    expect(store.complete).toHaveBeenCalledWith(expect.objectContaining(totals));
    expect(s3.commandCalls(ListObjectVersionsCommand)[0]?.args[0].input).toMatchObject({
      Bucket: 'lethe-data',
      Prefix: 'streams/acme/logs/1/',
      MaxKeys: 1,
    });
    expect(store.complete).toHaveBeenCalledTimes(1);
  });

  it('waits, with a delayed finalize message, for an ingest still in flight', async () => {
    const { subject, store, queue } = finalizer(
      aStream({
        state: 'DELETING',
        deletionId: DELETION_ID,
        inflightIngests: 1,
        lastIngestAt: new Date(NOW.getTime() - 10_000).toISOString(),
      }),
    );

    const outcome = await subject.finalize(ready());

    expect(outcome).toBe('delayed');
    expect(queue.send).toHaveBeenCalledWith(
      [
        {
          v: 1,
          type: 'finalize',
          tenant: 'acme',
          deletionId: DELETION_ID,
          generation: 1,
          round: 1,
        },
      ],
      2,
    );
    expect(s3.calls()).toHaveLength(0);
    expect(store.complete).not.toHaveBeenCalled();
  });

  it('stops waiting for an ingest once the grace has passed (its writer died)', async () => {
    listing([]);
    const { subject } = finalizer(
      aStream({
        state: 'DELETING',
        deletionId: DELETION_ID,
        inflightIngests: 1,
        lastIngestAt: new Date(NOW.getTime() - 31_000).toISOString(),
      }),
    );

    expect(await subject.finalize(ready())).toBe('completed');
  });

  it('fails the deletion when keys could not be deleted and remain', async () => {
    listing(['streams/acme/logs/1/dt=2026-01-01/locked.json']);
    totals = { objectsDeleted: 9, bytesDeleted: 90, failedObjects: 1 };
    const { subject, store } = finalizer();

    const outcome = await subject.finalize(ready());

    expect(outcome).toBe('failed');
    expect(store.fail).toHaveBeenCalledWith(expect.objectContaining({ failedObjects: 1 }));
    expect(store.complete).not.toHaveBeenCalled();
  });

  it('starts another round when keys remain that nothing refused', async () => {
    listing(['streams/acme/logs/1/manifest.json']);
    const { subject, store } = finalizer();

    expect(await subject.finalize(ready({ round: 2 }))).toBe('next-round');
    expect(store.nextRound).toHaveBeenCalledTimes(1);
  });

  it('goes again version by version when verification finds the bucket keeps versions', async () => {
    s3.on(ListObjectVersionsCommand).resolves({
      DeleteMarkers: [{ Key: 'streams/acme/logs/1/a.json', VersionId: 'v2' }],
      IsTruncated: false,
    });
    const { subject, store } = finalizer();

    expect(await subject.finalize(ready())).toBe('next-round');
    expect(store.nextRound).toHaveBeenCalledWith(expect.anything(), true);
  });

  it('gives up with LocationNotEmpty after the last round', async () => {
    listing(['streams/acme/logs/1/late.json']);
    const { subject, store } = finalizer();

    expect(await subject.finalize(ready({ round: 3 }))).toBe('failed');
    expect(store.fail).toHaveBeenCalledWith(
      expect.anything(),
      expect.objectContaining({ code: 'LocationNotEmpty' }),
    );
  });

  it('reports a lost race (another finalizer won) as fenced', async () => {
    listing([]);
    const { subject, store } = finalizer();
    store.complete.mockResolvedValue('fenced');

    expect(await subject.finalize(ready())).toBe('fenced');
  });

  describe('finalizeIfReady (after a chain settles)', () => {
    it('verifies once it has claimed the round', async () => {
      listing([]);
      const { subject, store } = finalizer();
      store.getDeletion.mockResolvedValue(ready());

      expect(await subject.finalizeIfReady(aDeletion())).toBe('completed');
      expect(store.claimVerification).toHaveBeenCalledWith(ready());
      expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(1);
    });

    it('leaves the round to the worker that claimed it first: no second listing', async () => {
      const { subject, store } = finalizer();
      store.getDeletion.mockResolvedValue(ready());
      store.claimVerification.mockResolvedValue(false);

      expect(await subject.finalizeIfReady(aDeletion())).toBe('claimed');
      expect(s3.calls()).toHaveLength(0);
      expect(store.complete).not.toHaveBeenCalled();
    });

    it('claims nothing while a chain is still open', async () => {
      const { subject, store } = finalizer();
      store.getDeletion.mockResolvedValue(ready({ chainsSettled: 1 }));

      expect(await subject.finalizeIfReady(aDeletion())).toBe('not-ready');
      expect(store.claimVerification).not.toHaveBeenCalled();
    });

    it('is fenced when the deletion moved to another round', async () => {
      const { subject, store } = finalizer();
      store.getDeletion.mockResolvedValue(ready({ round: 2 }));

      expect(await subject.finalizeIfReady(aDeletion())).toBe('fenced');
      expect(store.claimVerification).not.toHaveBeenCalled();
    });
  });

  it('is ready only when every chain of the round has settled', () => {
    expect(isReadyToVerify(ready())).toBe(true);
    expect(isReadyToVerify(ready({ chainsTotal: 0, chainsSettled: 0 }))).toBe(true);
    expect(isReadyToVerify(ready({ chainsSettled: 1 }))).toBe(false);
    expect(isReadyToVerify(ready({ state: 'PENDING' }))).toBe(false);
  });
});
