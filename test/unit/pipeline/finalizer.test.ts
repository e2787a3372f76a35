import {
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  NoSuchUpload,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChainRecord,
  clockOf,
  type DeletionRecord,
  type DeletionTotals,
  done,
  duplicate,
  fenced,
  finalizeMessage,
  ok,
  type StreamRecord,
} from '../../../lib/core/index.ts';
import type { FinalizerOptions } from '../../../lib/pipeline/finalizer.ts';
import { type DeletionEvents, Finalizer, isReadyToVerify } from '../../../lib/pipeline/index.ts';
import type {
  ChainStore,
  DeletionStore,
  StreamStore,
  UploadStore,
} from '../../../lib/store/index.ts';
import { aChain, aDeletion, aPage, aStream, DELETION_ID, NOW } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const location = 'streams/acme/logs/1/';
/** A RUNNING deletion whose two chains have settled: its round is ready to verify. */
const ready = (overrides: Partial<DeletionRecord> = {}) =>
  aDeletion({ chainsTotal: 2, chainsSettled: 2, ...overrides });
/** Requested an hour before NOW. */
const SECONDS_SINCE_REQUEST = 3600;
const noTotals: DeletionTotals = { objectsDeleted: 0, bytesDeleted: 0, failedObjects: 0 };

function finalizer(
  stream: StreamRecord | undefined = aStream({ state: 'DELETING', deletionId: DELETION_ID }),
  totals: DeletionTotals = noTotals,
  now = NOW,
) {
  const deletions = {
    // The claim answers the deletion as it wrote it (ready, and now claimed).
    claimVerification: vi.fn<DeletionStore['claimVerification']>(async () =>
      ok(ready({ verifiedRound: 1 })),
    ),
    complete: vi.fn<DeletionStore['complete']>(async () => done),
    fail: vi.fn<DeletionStore['fail']>(async () => done),
    nextRound: vi.fn<DeletionStore['nextRound']>(async () => done),
    heartbeat: vi.fn<DeletionStore['heartbeat']>(async () => duplicate()),
  } satisfies FinalizerOptions['deletions'];
  const chains = {
    settle: vi.fn<ChainStore['settle']>(async () => done),
    totals: vi.fn<ChainStore['totals']>(async () => totals),
    all: vi.fn<ChainStore['all']>(async () => []),
    completePage: vi.fn<ChainStore['completePage']>(async () => duplicate()),
    stop: vi.fn<ChainStore['stop']>(async (chain) => ok(chain)),
  } satisfies FinalizerOptions['chains'];
  const streams = {
    find: vi.fn<StreamStore['find']>(async () => stream),
  } satisfies FinalizerOptions['streams'];
  const queue = {
    send: vi.fn<FinalizerOptions['queue']['send']>(async () => {}),
  } satisfies FinalizerOptions['queue'];
  const events = {
    ended: vi.fn<DeletionEvents['ended']>(),
    resumed: vi.fn<DeletionEvents['resumed']>(),
  } satisfies DeletionEvents;
  const uploads = {
    record: vi.fn<UploadStore['record']>(async () => {}),
    aborted: vi.fn<UploadStore['aborted']>(async () => {}),
    count: vi.fn<UploadStore['count']>(async () => 0),
  } satisfies FinalizerOptions['uploads'];
  const subject = new Finalizer({
    deletions,
    chains,
    streams,
    uploads,
    s3: new S3Client({ region: 'us-east-1' }),
    queue,
    events,
    ingestGraceSeconds: 30,
    maxRounds: 3,
    clock: clockOf(() => now),
  });
  return { subject, deletions, chains, streams, uploads, queue, events };
}

/** What verification sees: current objects of an unversioned bucket (version id `null`). */
const leftover = (keys: string[]) =>
  s3.on(ListObjectVersionsCommand).resolves({
    Versions: keys.map((Key) => ({ Key, Size: 1, VersionId: 'null' })),
    IsTruncated: false,
  });

/** A stream with an ingest in flight, admitted `secondsAgo` before NOW. */
const ingesting = (secondsAgo: number) =>
  aStream({
    state: 'DELETING',
    deletionId: DELETION_ID,
    ingestsInFlight: new Set(['ingest-1']),
    lastIngestAt: new Date(NOW.getTime() - secondsAgo * 1000).toISOString(),
  });

beforeEach(() => {
  s3.reset();
  s3.on(ListMultipartUploadsCommand).resolves({ IsTruncated: false });
});

describe('Finalizer.finalize', () => {
  it.each<[string, Partial<DeletionRecord>]>([
    ['a chain has not settled (ended with no page open)', { chainsSettled: 1 }],
    ['the deletion is not running', { state: 'PENDING' }],
  ])('does nothing while %s', async (_, overrides) => {
    // Prepare
    const { subject, deletions } = finalizer();

    // Act
    const outcome = await subject.finalize(ready(overrides));

    // Assess
    expect(outcome).toBe('not-ready');
    expect(s3.calls()).toHaveLength(0);
    expect(deletions.complete).not.toHaveBeenCalled();
  });

  it('verifies an empty location with two listings: versions, then uploads in progress', async () => {
    // Prepare
    leftover([]);
    const { subject, uploads } = finalizer();

    // Act
    await subject.finalize(ready());

    // Assess
    expect(s3.commandCalls(ListObjectVersionsCommand).map((call) => call.args[0].input)).toEqual([
      { Bucket: 'lethe-data', Prefix: location, MaxKeys: 1 },
    ]);
    expect(s3.commandCalls(ListMultipartUploadsCommand)).toHaveLength(1);
    expect(s3.calls()).toHaveLength(2);
    expect(uploads.record).not.toHaveBeenCalled();
  });

  it('completes, with the totals of every chain, when the location comes back empty', async () => {
    // Prepare
    leftover([]);
    const totals = { objectsDeleted: 2_000, bytesDeleted: 40_000, failedObjects: 0 };
    const { subject, deletions } = finalizer(undefined, totals);

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('completed');
    expect(deletions.complete).toHaveBeenCalledExactlyOnceWith({
      ...ready(),
      ...totals,
      multipartUploadsAborted: 0,
      verifiedAt: NOW.toISOString(),
    });
  });

  it('completes with no failure when a key refused once is gone by verification (a duplicate deleted it)', async () => {
    // Prepare
    leftover([]);
    const totals = { objectsDeleted: 2, bytesDeleted: 20, failedObjects: 1 };
    const { subject, deletions } = finalizer(undefined, totals);

    // Act
    const outcome = await subject.finalize(ready());

    // Assess: a COMPLETED receipt lists no failure (its failures are read only while counted)
    expect(outcome).toBe('completed');
    expect(deletions.complete).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ objectsDeleted: 2, failedObjects: 0 }),
    );
  });

  it('aborts every upload in progress inside the location, recording each before its abort, then looks again', async () => {
    // Prepare: two uploads in progress, one deep in a partition, one directly under the location:
    // seen by the verification, listed again to abort them, gone when it looks again.
    leftover([]);
    const inProgress = {
      IsTruncated: false,
      Uploads: [
        { Key: `${location}dt=2026-11-01/a.json`, UploadId: 'u1' },
        { Key: `${location}b.json`, UploadId: 'u2' },
      ],
    };
    s3.on(ListMultipartUploadsCommand)
      .resolvesOnce(inProgress)
      .resolvesOnce(inProgress)
      .resolves({ IsTruncated: false, Uploads: [] });
    const steps: string[] = [];
    s3.on(AbortMultipartUploadCommand).callsFake(async (input) => {
      steps.push(`abort ${input.UploadId}`);
      return {};
    });
    const { subject, uploads, deletions } = finalizer();
    uploads.record.mockImplementation(async () => {
      steps.push('record');
    });
    uploads.count.mockResolvedValue(2);

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('completed');
    expect(uploads.record).toHaveBeenCalledExactlyOnceWith(ready(), [
      { key: `${location}dt=2026-11-01/a.json`, uploadId: 'u1' },
      { key: `${location}b.json`, uploadId: 'u2' },
    ]);
    expect(steps).toEqual(['record', 'abort u1', 'abort u2']);
    expect(uploads.aborted).toHaveBeenCalledExactlyOnceWith(ready(), [
      { key: `${location}dt=2026-11-01/a.json`, uploadId: 'u1' },
      { key: `${location}b.json`, uploadId: 'u2' },
    ]);
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(2);
    // The deletion was read before its uploads were recorded: the count is told they were.
    expect(uploads.count).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ uploadsRecorded: true }),
    );
    expect(deletions.complete).toHaveBeenCalledWith(
      expect.objectContaining({ multipartUploadsAborted: 2 }),
    );
  });

  it('counts as aborted only the uploads its aborts took: not one that completed before its abort', async () => {
    // Prepare: u1 completes (an object now) between the listing and its abort
    leftover([]);
    const inProgress = {
      IsTruncated: false,
      Uploads: [
        { Key: `${location}a.bin`, UploadId: 'u1' },
        { Key: `${location}b.bin`, UploadId: 'u2' },
      ],
    };
    s3.on(ListMultipartUploadsCommand)
      .resolvesOnce(inProgress)
      .resolvesOnce(inProgress)
      .resolves({ IsTruncated: false, Uploads: [] });
    s3.on(AbortMultipartUploadCommand, { UploadId: 'u1' }).rejects(
      new NoSuchUpload({ message: 'The specified upload does not exist.', $metadata: {} }),
    );
    s3.on(AbortMultipartUploadCommand, { UploadId: 'u2' }).resolves({});
    const { subject, uploads } = finalizer();

    // Act
    await subject.finalize(ready());

    // Assess: both recorded before their aborts, only u2 marked (counted)
    expect(uploads.record).toHaveBeenCalledWith(ready(), [
      { key: `${location}a.bin`, uploadId: 'u1' },
      { key: `${location}b.bin`, uploadId: 'u2' },
    ]);
    expect(uploads.aborted).toHaveBeenCalledExactlyOnceWith(ready(), [
      { key: `${location}b.bin`, uploadId: 'u2' },
    ]);
  });

  it('does not complete while an upload started after the abort is in progress: another round', async () => {
    // Prepare: one upload seen and aborted, then another in progress when it looks again.
    leftover([]);
    const early = { IsTruncated: false, Uploads: [{ Key: `${location}a.bin`, UploadId: 'u1' }] };
    s3.on(ListMultipartUploadsCommand)
      .resolvesOnce(early)
      .resolvesOnce(early)
      .resolves({
        IsTruncated: false,
        Uploads: [{ Key: `${location}late.bin`, UploadId: 'u3' }],
      });
    const { subject, deletions, uploads } = finalizer();

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('next-round');
    expect(uploads.record).toHaveBeenCalledExactlyOnceWith(ready(), [
      { key: `${location}a.bin`, uploadId: 'u1' },
    ]);
    expect(deletions.complete).not.toHaveBeenCalled();
    expect(deletions.nextRound).toHaveBeenCalledOnce();
  });

  it('aborts the uploads in progress of a location where objects are left too: the next round finds none', async () => {
    // Prepare
    leftover([`${location}late.json`]);
    s3.on(ListMultipartUploadsCommand).resolves({
      IsTruncated: false,
      Uploads: [{ Key: `${location}b.bin`, UploadId: 'u2' }],
    });
    const { subject, deletions, uploads } = finalizer();

    // Act
    const outcome = await subject.finalize(ready());

    // Assess: one listing of versions, one of the uploads it aborts.
    expect(outcome).toBe('next-round');
    expect(uploads.record).toHaveBeenCalledExactlyOnceWith(ready(), [
      { key: `${location}b.bin`, uploadId: 'u2' },
    ]);
    expect(s3.commandCalls(AbortMultipartUploadCommand)).toHaveLength(1);
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(1);
    expect(deletions.nextRound).toHaveBeenCalledOnce();
  });

  it('waits, with a delayed finalize message, for an ingest still in flight', async () => {
    // Prepare
    const { subject, deletions, queue } = finalizer(ingesting(10));

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('delayed');
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([finalizeMessage(ready())], 2);
    expect(s3.calls()).toHaveLength(0);
    expect(deletions.complete).not.toHaveBeenCalled();
  });

  it('marks progress while it waits for an ingest, so the sweeper never takes the wait for a stall', async () => {
    // Prepare: a grace longer than the sweeper's stale threshold times its attempts.
    const { subject, deletions } = finalizer(ingesting(10));

    // Act
    await subject.finalize(ready());

    // Assess: a mark at most once a heartbeat interval, as the fence's.
    expect(deletions.heartbeat).toHaveBeenCalledExactlyOnceWith(
      ready(),
      new Date(NOW.getTime() - 60_000),
    );
  });

  it('marks no progress when nothing is in flight', async () => {
    // Prepare
    const { subject, deletions } = finalizer();
    leftover([]);

    // Act
    await subject.finalize(ready());

    // Assess
    expect(deletions.heartbeat).not.toHaveBeenCalled();
  });

  it('looks again no later than the grace allows the ingest', async () => {
    // Prepare: admitted 29.5 s ago, with 30 s of grace.
    const { subject, queue } = finalizer(ingesting(29.5));

    // Act
    await subject.finalize(ready());

    // Assess
    expect(queue.send.mock.calls[0]?.[1]).toBe(0.5);
  });

  it.each([
    ['waits for it', 10, 'delayed'],
    ['stops waiting once the grace has passed', 31, 'completed'],
  ])(
    'for an ingest whose write failed (S3 may still store it), %s',
    async (_, secondsAgo, outcome) => {
      // Prepare: nothing in flight; the write of the last ingest admitted failed.
      leftover([]);
      const { ingestsInFlight: _inFlight, ...stream } = ingesting(secondsAgo);
      const { subject } = finalizer({ ...stream, abandonedIngestAt: stream.lastIngestAt });

      // Act
      const finalized = await subject.finalize(ready());

      // Assess
      expect(finalized).toBe(outcome);
    },
  );

  it('stops waiting for an ingest once the grace has passed (its writer died)', async () => {
    // Prepare
    leftover([]);
    const { subject } = finalizer(ingesting(31));

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('completed');
  });

  it.each<[string, Partial<DeletionRecord>]>([
    ['its tombstone was written with no ingest in flight', { ingestsSettled: true }],
    ["it deletes partitions (the stream's ingests go to today's)", { before: '2026-01-01' }],
  ])('does not read the stream for ingests when %s', async (_, overrides) => {
    // Prepare: the stream would say an ingest is in flight, were it read.
    leftover([]);
    const { subject, streams } = finalizer(ingesting(1));

    // Act
    const outcome = await subject.finalize(ready(overrides));

    // Assess
    expect(outcome).toBe('completed');
    expect(streams.find).not.toHaveBeenCalled();
  });

  describe('of partitions before today, just after midnight', () => {
    // NOW's day is 2026-03-01: a deletion of the days before it, looked at 10 s past midnight.
    const today = ready({ before: '2026-03-01' });
    const justAfterMidnight = new Date('2026-03-01T00:00:10.000Z');
    const active = (inFlight: number) =>
      aStream({
        state: 'ACTIVE',
        ...(inFlight ? { ingestsInFlight: new Set(['ingest-1']) } : {}),
      });

    it('waits for an ingest in flight: admitted before midnight, it writes yesterday', async () => {
      // Prepare
      const { subject, queue } = finalizer(active(1), noTotals, justAfterMidnight);

      // Act
      const outcome = await subject.finalize(today);

      // Assess
      expect(outcome).toBe('delayed');
      expect(queue.send).toHaveBeenCalledExactlyOnceWith([finalizeMessage(today)], 2);
      expect(s3.calls()).toHaveLength(0);
    });

    it.each<[string, StreamRecord, Date]>([
      ['no ingest is in flight', active(0), justAfterMidnight],
      ['the grace has passed since midnight', active(1), new Date('2026-03-01T00:00:31.000Z')],
      ['the stream is another incarnation', { ...active(1), generation: 2 }, justAfterMidnight],
    ])('does not wait when %s', async (_, stream, now) => {
      // Prepare
      leftover([]);
      const { subject } = finalizer(stream, noTotals, now);

      // Act
      const outcome = await subject.finalize(today);

      // Assess
      expect(outcome).toBe('completed');
    });
  });

  it("does not wait for ingests into another deletion's stream record", async () => {
    // Prepare: the name was freed and is being written again (another incarnation).
    leftover([]);
    const { subject } = finalizer({ ...ingesting(1), state: 'ACTIVE', deletionId: undefined });

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('completed');
  });

  it('fails the deletion when keys could not be deleted and remain', async () => {
    // Prepare
    leftover([`${location}dt=2026-01-01/locked.json`]);
    const totals = { objectsDeleted: 9, bytesDeleted: 90, failedObjects: 1 };
    const { subject, deletions } = finalizer(undefined, totals);

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('failed');
    expect(deletions.fail).toHaveBeenCalledExactlyOnceWith(
      { ...ready(), ...totals, multipartUploadsAborted: 0 },
      undefined,
    );
    expect(deletions.complete).not.toHaveBeenCalled();
  });

  it('starts another round when keys remain that nothing refused', async () => {
    // Prepare
    leftover([`${location}manifest.json`]);
    const { subject, deletions } = finalizer();

    // Act
    const outcome = await subject.finalize(ready({ round: 2 }));

    // Assess
    expect(outcome).toBe('next-round');
    expect(deletions.nextRound).toHaveBeenCalledExactlyOnceWith(ready({ round: 2 }));
  });

  it('goes again version by version when verification finds the bucket keeps versions', async () => {
    // Prepare
    s3.on(ListObjectVersionsCommand).resolves({
      DeleteMarkers: [{ Key: `${location}a.json`, VersionId: 'v2' }],
      IsTruncated: false,
    });
    const { subject, deletions } = finalizer();

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('next-round');
    expect(deletions.nextRound).toHaveBeenCalledExactlyOnceWith(ready(), true);
  });

  it('gives up with LocationNotEmpty after the last round', async () => {
    // Prepare
    leftover([`${location}late.json`]);
    const { subject, deletions } = finalizer();

    // Act
    const outcome = await subject.finalize(ready({ round: 3 }));

    // Assess
    expect(outcome).toBe('failed');
    expect(deletions.fail).toHaveBeenCalledExactlyOnceWith(
      { ...ready({ round: 3 }), multipartUploadsAborted: 0 },
      expect.objectContaining({ code: 'LocationNotEmpty' }),
    );
  });

  it('reports a completion that lost a race (another run completed it) as fenced', async () => {
    // Prepare
    leftover([]);
    const { subject, deletions } = finalizer();
    deletions.complete.mockResolvedValue(fenced());

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('fenced');
  });

  it('reports a next round that lost a race (another run moved it) as fenced', async () => {
    // Prepare
    leftover([`${location}late.json`]);
    const { subject, deletions } = finalizer();
    deletions.nextRound.mockResolvedValue(fenced());

    // Act
    const outcome = await subject.finalize(ready());

    // Assess
    expect(outcome).toBe('fenced');
  });
});

describe('Finalizer.finalizeIfReady (after a chain settles)', () => {
  it('verifies once it has claimed the round: the claim answers the deletion, no read before it', async () => {
    // Prepare
    leftover([]);
    const { subject, deletions } = finalizer();

    // Act
    const outcome = await subject.finalizeIfReady(aDeletion());

    // Assess
    expect(outcome).toBe('completed');
    expect(deletions.claimVerification).toHaveBeenCalledExactlyOnceWith(aDeletion());
    expect(deletions.complete).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ deletionId: DELETION_ID, verifiedRound: 1, chainsSettled: 2 }),
    );
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(1);
  });

  it('leaves the round to the worker that claimed it first: no second listing', async () => {
    // Prepare
    const { subject, deletions } = finalizer();
    deletions.claimVerification.mockResolvedValue(duplicate(ready({ verifiedRound: 1 })));

    // Act
    const outcome = await subject.finalizeIfReady(aDeletion());

    // Assess
    expect(outcome).toBe('claimed');
    expect(s3.calls()).toHaveLength(0);
    expect(deletions.complete).not.toHaveBeenCalled();
  });

  it('verifies nothing while a chain is still open (the claim is refused)', async () => {
    // Prepare
    const { subject, deletions } = finalizer();
    deletions.claimVerification.mockResolvedValue(duplicate(ready({ chainsSettled: 1 })));

    // Act
    const outcome = await subject.finalizeIfReady(aDeletion());

    // Assess
    expect(outcome).toBe('not-ready');
    expect(s3.calls()).toHaveLength(0);
    expect(deletions.complete).not.toHaveBeenCalled();
  });

  it.each<[string, DeletionRecord | undefined]>([
    ['moved to another round', ready({ round: 2 })],
    ['is gone', undefined],
  ])('is fenced when the deletion %s', async (_, current) => {
    // Prepare
    const { subject, deletions } = finalizer();
    deletions.claimVerification.mockResolvedValue(duplicate(current));

    // Act
    const outcome = await subject.finalizeIfReady(aDeletion({ round: 1 }));

    // Assess
    expect(outcome).toBe('fenced');
    expect(s3.calls()).toHaveLength(0);
  });
});

describe('Finalizer.settle (a chain that may have ended)', () => {
  const ended = (overrides: Partial<ChainRecord> = {}) =>
    aChain({ lastPage: 4, ended: true, open: {}, ...overrides });

  beforeEach(() => {
    leftover([]);
  });

  it('counts a chain that ended with no page open towards its round', async () => {
    // Prepare
    const chain = ended();
    const { subject, chains } = finalizer();

    // Act
    await subject.settle(chain);

    // Assess
    expect(chains.settle).toHaveBeenCalledExactlyOnceWith(chain);
  });

  it('then verifies the round, if that chain was its last', async () => {
    // Prepare
    const { subject, deletions } = finalizer();

    // Act
    const outcome = await subject.settle(ended());

    // Assess
    expect(outcome).toBe('completed');
    expect(deletions.claimVerification).toHaveBeenCalledExactlyOnceWith(ended());
  });

  it("takes a first round of one chain's totals from that chain, and reads no chains", async () => {
    // Prepare
    const { subject, chains, deletions } = finalizer();
    deletions.claimVerification.mockResolvedValueOnce(
      ok(ready({ chainsTotal: 1, chainsSettled: 1, verifiedRound: 1 })),
    );

    // Act
    const outcome = await subject.settle(ended({ objectsDeleted: 7, bytesDeleted: 70 }));

    // Assess
    expect(outcome).toBe('completed');
    expect(chains.totals).not.toHaveBeenCalled();
    expect(deletions.complete.mock.calls[0]?.[0]).toMatchObject({
      objectsDeleted: 7,
      bytesDeleted: 70,
      failedObjects: 0,
    });
  });

  it.each<[string, Partial<DeletionRecord>, Partial<ChainRecord>]>([
    ['has more than one chain (a split adds one)', { chainsTotal: 2, chainsSettled: 2 }, {}],
    ['is a later round', { round: 2, chainsTotal: 1, chainsSettled: 1 }, { round: 2 }],
  ])('reads every chain for the totals when the round %s', async (_, round, chain) => {
    // Prepare
    const totals = { objectsDeleted: 9, bytesDeleted: 90, failedObjects: 0 };
    const { subject, chains, deletions } = finalizer(undefined, totals);
    deletions.claimVerification.mockResolvedValueOnce(ok(ready({ ...round, verifiedRound: 1 })));

    // Act
    await subject.settle(ended({ objectsDeleted: 7, bytesDeleted: 70, ...chain }));

    // Assess
    expect(chains.totals).toHaveBeenCalledOnce();
    expect(deletions.complete.mock.calls[0]?.[0]).toMatchObject(totals);
  });

  it.each<[string, ChainRecord]>([
    ['has not ended', aChain({ lastPage: 4, ended: false })],
    ['ended with a page still open', ended({ open: { '4': aPage({ page: 4 }) } })],
  ])('neither settles nor verifies a chain that %s', async (_, chain) => {
    // Prepare
    const { subject, chains, deletions } = finalizer();

    // Act
    const outcome = await subject.settle(chain);

    // Assess
    expect(outcome).toBe('not-ready');
    expect(chains.settle).not.toHaveBeenCalled();
    expect(deletions.claimVerification).not.toHaveBeenCalled();
  });

  it('does not settle a chain twice, but still looks whether the round is done', async () => {
    // Prepare: the run that settled it died before verifying.
    const { subject, chains, deletions } = finalizer();

    // Act
    await subject.settle(ended({ settled: true }));

    // Assess
    expect(chains.settle).not.toHaveBeenCalled();
    expect(deletions.claimVerification).toHaveBeenCalledTimes(1);
  });

  it('looks whether the round is done when another run settled the chain first', async () => {
    // Prepare
    const { subject, chains, deletions } = finalizer();
    chains.settle.mockResolvedValue(duplicate());

    // Act
    await subject.settle(ended());

    // Assess
    expect(deletions.claimVerification).toHaveBeenCalledTimes(1);
  });

  it('is fenced, and verifies nothing, when the deletion no longer runs that round', async () => {
    // Prepare
    const { subject, chains, deletions } = finalizer();
    chains.settle.mockResolvedValue(fenced());

    // Act
    const outcome = await subject.settle(ended());

    // Assess
    expect(outcome).toBe('fenced');
    expect(deletions.claimVerification).not.toHaveBeenCalled();
  });
});

describe('Finalizer.fail (a deletion the sweeper gives up on)', () => {
  const stalled = { code: 'Stalled', message: 'no progress after 3 attempts' };

  it('ends it as FAILED with the totals of its chains and the reason', async () => {
    // Prepare
    const totals = { objectsDeleted: 70, bytesDeleted: 700, failedObjects: 0 };
    const { subject, deletions } = finalizer(undefined, totals);
    const claimed = aDeletion({ attempts: 4 });

    // Act
    const outcome = await subject.fail(claimed, stalled);

    // Assess
    expect(outcome).toBe('failed');
    expect(deletions.fail).toHaveBeenCalledExactlyOnceWith(
      { ...claimed, ...totals, multipartUploadsAborted: 0 },
      stalled,
    );
  });

  it('is fenced when the deletion moved meanwhile', async () => {
    // Prepare
    const { subject, deletions } = finalizer();
    deletions.fail.mockResolvedValue(fenced());

    // Act
    const outcome = await subject.fail(aDeletion(), stalled);

    // Assess
    expect(outcome).toBe('fenced');
  });
});

describe('Finalizer and the DeletionEvents port', () => {
  it('reports a completion once, with its final totals and the seconds since the request', async () => {
    // Prepare
    leftover([]);
    const totals = { objectsDeleted: 10, bytesDeleted: 100, failedObjects: 0 };
    const { subject, events } = finalizer(undefined, totals);

    // Act
    await subject.finalize(ready());

    // Assess
    expect(events.ended).toHaveBeenCalledExactlyOnceWith(
      { ...ready(), ...totals, multipartUploadsAborted: 0, state: 'COMPLETED' },
      SECONDS_SINCE_REQUEST,
      undefined,
    );
  });

  it('reports a failure for keys that could not be deleted once, without a reason', async () => {
    // Prepare
    leftover([`${location}locked.json`]);
    const totals = { objectsDeleted: 9, bytesDeleted: 90, failedObjects: 1 };
    const { subject, events } = finalizer(undefined, totals);

    // Act
    await subject.finalize(ready());

    // Assess
    expect(events.ended).toHaveBeenCalledExactlyOnceWith(
      { ...ready(), ...totals, multipartUploadsAborted: 0, state: 'FAILED' },
      SECONDS_SINCE_REQUEST,
      undefined,
    );
  });

  it('reports a location that never empties once, with its reason', async () => {
    // Prepare
    leftover([`${location}late.json`]);
    const { subject, events } = finalizer();

    // Act
    await subject.finalize(ready({ round: 3 }));

    // Assess
    expect(events.ended).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ state: 'FAILED', round: 3 }),
      SECONDS_SINCE_REQUEST,
      expect.objectContaining({ code: 'LocationNotEmpty' }),
    );
  });

  it("reports the sweeper's failure once, with its reason", async () => {
    // Prepare
    const stalled = { code: 'Stalled', message: 'no progress' };
    const { subject, events } = finalizer();

    // Act
    await subject.fail(aDeletion(), stalled);

    // Assess
    expect(events.ended).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ state: 'FAILED' }),
      SECONDS_SINCE_REQUEST,
      stalled,
    );
  });

  it.each<[string, StreamRecord | undefined, (setup: ReturnType<typeof finalizer>) => unknown]>([
    [
      'a completion another run made first',
      undefined,
      async ({ subject, deletions }) => {
        leftover([]);
        deletions.complete.mockResolvedValue(fenced());
        await subject.finalize(ready());
      },
    ],
    [
      'a failure another run made first',
      undefined,
      async ({ subject, deletions }) => {
        deletions.fail.mockResolvedValue(fenced());
        await subject.fail(ready(), { code: 'Stalled', message: 'no progress' });
      },
    ],
    [
      'a next round',
      undefined,
      async ({ subject }) => {
        leftover([`${location}manifest.json`]);
        await subject.finalize(ready());
      },
    ],
    ['a delay for an ingest', ingesting(1), ({ subject }) => subject.finalize(ready())],
  ])('reports nothing for %s', async (_, stream, act) => {
    // Prepare
    const setup = finalizer(stream);

    // Act
    await act(setup);

    // Assess
    expect(setup.events.ended).not.toHaveBeenCalled();
  });
});

describe('isReadyToVerify', () => {
  it.each<[string, boolean, Partial<DeletionRecord>]>([
    ['every chain of the round has settled', true, {}],
    ['the round has no chains', true, { chainsTotal: 0, chainsSettled: 0 }],
    ['a chain has not settled', false, { chainsSettled: 1 }],
    ['the deletion is PENDING', false, { state: 'PENDING' }],
    ['the deletion has COMPLETED', false, { state: 'COMPLETED' }],
  ])('when %s, is %s', (_, expected, overrides) => {
    expect(isReadyToVerify(ready(overrides))).toBe(expected);
  });
});
