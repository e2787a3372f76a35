import { describe, expect, it, vi } from 'vitest';
import { clockOf, type DeletionRecord, done } from '../../../lib/core/index.ts';
import { Sweeper } from '../../../lib/pipeline/index.ts';
import type { SweeperOptions } from '../../../lib/pipeline/sweeper.ts';
import type { DeletionIndex } from '../../../lib/store/index.ts';
import { aDeletion, NOW } from '../../helpers/records.ts';

const OTHER_ID = '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';

/** A sweeper whose index holds `open` as its open deletions; nothing else is called. */
function sweeperOver(open: DeletionRecord[]) {
  const index = {
    stale: vi.fn<DeletionIndex['stale']>(async function* () {
      yield* open;
    }),
    due: vi.fn<DeletionIndex['due']>(async function* () {}),
    scheduled: vi.fn<DeletionIndex['scheduled']>(async () => 0),
  } satisfies SweeperOptions['index'];
  const unused = () => {
    throw new Error('not called by oldestOpen');
  };
  return new Sweeper({
    index,
    deletions: { claimStale: vi.fn(unused), begin: vi.fn(async () => done) },
    chains: { list: vi.fn(unused) },
    queue: { send: vi.fn(unused) },
    dispatcher: { dispatch: vi.fn(unused) },
    finalizer: { finalize: vi.fn(unused), settle: vi.fn(unused), fail: vi.fn(unused) },
    events: { ended: vi.fn(), resumed: vi.fn() },
    staleAfterSeconds: 300,
    maxAttempts: 3,
    clock: clockOf(() => NOW),
  });
}

describe('Sweeper.oldestOpen, after a grace window', () => {
  it('counts a deletion open from when its grace window ended, not from its request', async () => {
    // Prepare: requested a day ago with a 23-hour window, so open for the last hour only
    const waited = aDeletion({
      state: 'PENDING',
      requestedAt: '2026-02-28T12:00:00.000Z',
      executeAfter: '2026-03-01T11:00:00.000Z',
    });
    const subject = sweeperOver([waited]);

    // Act
    const oldest = await subject.oldestOpen();

    // Assess: NOW is 2026-03-01T12:00:00Z
    expect(oldest).toEqual({ deletion: waited, ageSeconds: 3600 });
  });

  it('finds the deletion open longest, whatever the windows it waited', async () => {
    // Prepare: one requested first but open since 11:30; one open since 10:00
    const waitedLong = aDeletion({
      requestedAt: '2026-03-01T08:00:00.000Z',
      executeAfter: '2026-03-01T11:30:00.000Z',
    });
    const openLongest = aDeletion({
      deletionId: OTHER_ID,
      requestedAt: '2026-03-01T10:00:00.000Z',
      executeAfter: '2026-03-01T10:00:00.000Z',
    });
    const subject = sweeperOver([waitedLong, openLongest]);

    // Act
    const oldest = await subject.oldestOpen();

    // Assess
    expect(oldest).toEqual({ deletion: openLongest, ageSeconds: 2 * 3600 });
  });

  it('counts a retried deletion open from its retry, not from the request it failed days ago', async () => {
    // Prepare: requested and FAILED three days ago, retried 10 minutes ago
    const retried = aDeletion({
      state: 'RUNNING',
      requestedAt: '2026-02-26T12:00:00.000Z',
      executeAfter: '2026-02-26T12:00:00.000Z',
      retriedAt: '2026-03-01T11:50:00.000Z',
    });
    const subject = sweeperOver([retried]);

    // Act
    const oldest = await subject.oldestOpen();

    // Assess: 600 s, not three days, so the age alarm does not fire at the retry
    expect(oldest).toEqual({ deletion: retried, ageSeconds: 600 });
  });
});
