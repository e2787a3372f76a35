import {
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { clockOf, type DeletionRecord, done, duplicate, ok } from '../../../lib/core/index.ts';
import type { FinalizerOptions } from '../../../lib/pipeline/finalizer.ts';
import { type DeletionEvents, Finalizer } from '../../../lib/pipeline/index.ts';
import type { ChainStore, DeletionStore, UploadStore } from '../../../lib/store/index.ts';
import { aDeletion, NOW } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const location = 'streams/acme/logs/1/';
const MAX_ROUNDS = 3;

/** A RUNNING deletion whose chains have all settled, in `round`. */
const ready = (overrides: Partial<DeletionRecord>) =>
  aDeletion({ chainsTotal: 1, chainsSettled: 1, ingestsSettled: true, ...overrides });

function finalizer() {
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
    all: vi.fn<ChainStore['all']>(async () => []),
    completePage: vi.fn<ChainStore['completePage']>(async () => ok(undefined as never)),
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
    maxRounds: MAX_ROUNDS,
    clock: clockOf(() => NOW),
  });
  return { subject, deletions };
}

beforeEach(() => {
  s3.reset();
  s3.on(ListMultipartUploadsCommand).resolves({ IsTruncated: false });
  // Verification finds a key left (one the round's layout left to the next round).
  s3.on(ListObjectVersionsCommand).resolves({
    Versions: [{ Key: `${location}beside.json`, Size: 1, VersionId: 'null' }],
    IsTruncated: false,
  });
});

describe('Finalizer.finalize, the rounds of a retried deletion', () => {
  it('gives a retried deletion its rounds afresh: its first round after the retry is not its last', async () => {
    // Prepare: FAILED in round 3 (the last), then retried: round 4 is the retry's first.
    const { subject, deletions } = finalizer();
    const retried = ready({ round: MAX_ROUNDS + 1, retriedAtRound: MAX_ROUNDS, attempts: 2 });

    // Act
    const outcome = await subject.finalize(retried);

    // Assess
    expect(outcome).toBe('next-round');
    expect(deletions.nextRound).toHaveBeenCalledOnce();
    expect(deletions.fail).not.toHaveBeenCalled();
  });

  it('still gives up with LocationNotEmpty once the retry has used up its rounds', async () => {
    // Prepare
    const { subject, deletions } = finalizer();
    const retried = ready({ round: 2 * MAX_ROUNDS, retriedAtRound: MAX_ROUNDS, attempts: 2 });

    // Act
    const outcome = await subject.finalize(retried);

    // Assess
    expect(outcome).toBe('failed');
    expect(deletions.nextRound).not.toHaveBeenCalled();
    expect(deletions.fail).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ round: 2 * MAX_ROUNDS }),
      expect.objectContaining({
        code: 'LocationNotEmpty',
        message: expect.stringContaining(`after ${MAX_ROUNDS} rounds`),
      }),
    );
  });

  it('counts the rounds of a deletion never retried from its first', async () => {
    // Prepare
    const { subject, deletions } = finalizer();

    // Act
    const outcomes = [
      await subject.finalize(ready({ round: MAX_ROUNDS - 1 })),
      await subject.finalize(ready({ round: MAX_ROUNDS })),
    ];

    // Assess
    expect(outcomes).toEqual(['next-round', 'failed']);
    expect(deletions.fail).toHaveBeenCalledOnce();
  });
});
