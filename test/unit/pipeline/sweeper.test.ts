import { describe, expect, it, vi } from 'vitest';
import {
  type ChainRecord,
  clockOf,
  type DeletionRecord,
  done,
  duplicate,
  fenced,
  type Outcome,
  ok,
  type WorkMessage,
} from '../../../lib/core/index.ts';
import {
  type DeletionEvents,
  type Dispatcher,
  type Finalizer,
  Sweeper,
  type SweepFailed,
} from '../../../lib/pipeline/index.ts';
import type { SweeperOptions } from '../../../lib/pipeline/sweeper.ts';
import type { ChainStore, DeletionIndex, DeletionStore } from '../../../lib/store/index.ts';
import { aChain, aDeletion, aPage, DELETION_ID, NOW } from '../../helpers/records.ts';

const A = 'a'.repeat(20);
const B = 'b'.repeat(20);
const C = 'c'.repeat(20);
const OTHER_ID = '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';
const STALE_AFTER_SECONDS = 300;
const MAX_ATTEMPTS = 3;

/**
 * Claims every stale deletion it is shown, as the store would: one stall more, and one attempt
 * more unless the claim resumes nothing (`attempt` false: the Stalled verdict's).
 */
const claimAll = (
  seen: DeletionRecord,
  attempt = true,
  count = { stalls: (seen.stalls ?? 0) + 1, pagesDone: 0 },
): Outcome<DeletionRecord> =>
  ok({
    ...seen,
    attempts: seen.attempts + (attempt ? 1 : 0),
    stalls: count.stalls,
    progressSeen: count.pagesDone,
    progressRound: seen.round,
    ...(attempt ? {} : { stalledRound: seen.round }),
    updatedAt: NOW.toISOString(),
  });

function sweeper(
  stale: DeletionRecord[],
  claim: (seen: DeletionRecord) => Outcome<DeletionRecord> = claimAll,
  chainsOfRound: ChainRecord[] = [],
  due: DeletionRecord[] = [],
) {
  const index = {
    stale: vi.fn<DeletionIndex['stale']>(async function* () {
      yield* stale;
    }),
    due: vi.fn<DeletionIndex['due']>(async function* () {
      yield* due;
    }),
    scheduled: vi.fn<DeletionIndex['scheduled']>(async () => due.length),
  } satisfies SweeperOptions['index'];
  const deletions = {
    claimStale: vi.fn<DeletionStore['claimStale']>(async (seen, attempt, count) =>
      claim === claimAll ? claimAll(seen, attempt, count) : claim(seen),
    ),
    begin: vi.fn<DeletionStore['begin']>(async () => done),
  } satisfies SweeperOptions['deletions'];
  const chains = {
    list: vi.fn<ChainStore['list']>(async function* () {
      yield* chainsOfRound;
    }),
  } satisfies SweeperOptions['chains'];
  const queue = {
    send: vi.fn<SweeperOptions['queue']['send']>(async () => {}),
  } satisfies SweeperOptions['queue'];
  const dispatcher = {
    dispatch: vi.fn<Dispatcher['dispatch']>(async () => ({ outcome: 'dispatched' })),
  } satisfies SweeperOptions['dispatcher'];
  const finalizer = {
    finalize: vi.fn<Finalizer['finalize']>(async () => 'completed'),
    settle: vi.fn<Finalizer['settle']>(async () => 'not-ready'),
    fail: vi.fn<Finalizer['fail']>(async () => 'failed'),
  } satisfies SweeperOptions['finalizer'];
  const events = {
    ended: vi.fn<DeletionEvents['ended']>(),
    resumed: vi.fn<DeletionEvents['resumed']>(),
  } satisfies DeletionEvents;
  const subject = new Sweeper({
    deletions,
    index,
    chains,
    queue,
    dispatcher,
    finalizer,
    events,
    staleAfterSeconds: STALE_AFTER_SECONDS,
    maxAttempts: MAX_ATTEMPTS,
    clock: clockOf(() => NOW),
  });
  return { subject, index, deletions, chains, queue, dispatcher, finalizer, events };
}

/** The chain and page of each message sent, in order. */
const pagesOf = (messages: WorkMessage[] | undefined) =>
  messages?.map((message) => (message.type === 'page' ? [message.chainId, message.page] : message));

describe('Sweeper.sweep', () => {
  it('looks for open deletions without progress for the stale threshold', async () => {
    // Prepare
    const { subject, index } = sweeper([]);

    // Act
    await subject.sweep();

    // Assess
    expect(index.stale).toHaveBeenCalledExactlyOnceWith(
      new Date(NOW.getTime() - STALE_AFTER_SECONDS * 1000),
    );
  });

  it('claims each deletion it found, as it saw it', async () => {
    // Prepare
    const seen = aDeletion({ attempts: 1, updatedAt: '2026-03-01T11:50:00.000Z' });
    const { subject, deletions } = sweeper([seen]);

    // Act
    await subject.sweep();

    // Assess
    expect(deletions.claimStale).toHaveBeenCalledExactlyOnceWith(seen, true, {
      stalls: 1,
      pagesDone: 0,
    });
  });

  it('resumes a running deletion from its chains: open pages and the next page of each', async () => {
    // Prepare
    const chains = [
      aChain({ chainId: A, lastPage: 4, open: { '4': aPage({ page: 4 }) } }),
      aChain({ chainId: B, lastPage: 2 }),
      aChain({ chainId: C, lastPage: 7, ended: true, settled: true }),
    ];
    const { subject, queue } = sweeper([aDeletion({ chainsTotal: 3 })], claimAll, chains);

    // Act
    await subject.sweep();

    // Assess
    expect(queue.send).toHaveBeenCalledTimes(1);
    expect(pagesOf(queue.send.mock.calls[0]?.[0])).toEqual([
      [A, 4],
      [A, 5],
      [B, 3],
    ]);
  });

  it("sends each page with its chain's fence", async () => {
    // Prepare
    const chains = [aChain({ chainId: A, lastPage: 0, round: 2, generation: 3 })];
    const { subject, queue } = sweeper([aDeletion({ round: 2, generation: 3 })], claimAll, chains);

    // Act
    await subject.sweep();

    // Assess
    expect(queue.send.mock.calls[0]?.[0]).toEqual([
      {
        v: 1,
        type: 'page',
        tenant: 'acme',
        stream: 'logs',
        deletionId: DELETION_ID,
        generation: 3,
        round: 2,
        chainId: A,
        page: 1,
      },
    ]);
  });

  it('reports what it found, resumed and sent', async () => {
    // Prepare
    const chains = [
      aChain({ chainId: A, lastPage: 4, open: { '4': aPage({ page: 4 }) } }),
      aChain({ chainId: B, lastPage: 2 }),
    ];
    const { subject } = sweeper([aDeletion({ chainsTotal: 2 })], claimAll, chains);

    // Act
    const report = await subject.sweep();

    // Assess
    expect(report).toMatchObject({ stale: 1, resumed: 1, failed: 0, messages: 3 });
  });

  it('settles, through the finalizer, a chain that ended with nothing open but was never counted', async () => {
    // Prepare
    const ended = aChain({ chainId: C, lastPage: 3, ended: true, settled: false });
    const { subject, finalizer, queue } = sweeper([aDeletion()], claimAll, [ended]);

    // Act
    await subject.sweep();

    // Assess
    expect(finalizer.settle).toHaveBeenCalledExactlyOnceWith(ended);
    expect(pagesOf(queue.send.mock.calls[0]?.[0])).toEqual([]);
  });

  it.each<[string, ChainRecord]>([
    ['has been counted already', aChain({ lastPage: 7, ended: true, settled: true })],
    [
      'still has a page open',
      aChain({ lastPage: 7, ended: true, open: { '7': aPage({ page: 7 }) } }),
    ],
    ['has not ended', aChain({ lastPage: 7 })],
  ])('settles no chain that %s', async (_, chain) => {
    // Prepare
    const { subject, finalizer } = sweeper([aDeletion()], claimAll, [chain]);

    // Act
    await subject.sweep();

    // Assess
    expect(finalizer.settle).not.toHaveBeenCalled();
  });

  it('re-dispatches a pending deletion, as claimed', async () => {
    // Prepare
    const { subject, dispatcher, queue } = sweeper([aDeletion({ state: 'PENDING', attempts: 1 })]);

    // Act
    await subject.sweep();

    // Assess
    expect(dispatcher.dispatch).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ state: 'PENDING', attempts: 2 }),
    );
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('verifies a deletion whose round is done but was never finalized', async () => {
    // Prepare
    const done = aDeletion({ chainsTotal: 2, chainsSettled: 2 });
    const { subject, finalizer, queue } = sweeper([done]);

    // Act
    await subject.sweep();

    // Assess
    expect(finalizer.finalize).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ chainsSettled: 2, attempts: 2 }),
    );
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('ends a deletion that used up its attempts as FAILED (Stalled), through the finalizer', async () => {
    // Prepare: resumed MAX_ATTEMPTS - 1 times with no progress since
    const { subject, finalizer, queue } = sweeper([aDeletion({ stalls: MAX_ATTEMPTS - 1 })]);

    // Act
    await subject.sweep();

    // Assess
    expect(finalizer.fail).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ stalls: MAX_ATTEMPTS }),
      expect.objectContaining({ code: 'Stalled' }),
    );
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('does not count the claim that gives the verdict as an attempt: it resumes nothing', async () => {
    // Prepare: the first run and MAX_ATTEMPTS - 1 resumes, with no progress since the first
    const seen = aDeletion({ attempts: MAX_ATTEMPTS, stalls: MAX_ATTEMPTS - 1 });
    const { subject, deletions, finalizer } = sweeper([seen]);

    // Act
    await subject.sweep();

    // Assess: the receipt says MAX_ATTEMPTS attempts, as its reason does.
    expect(deletions.claimStale).toHaveBeenCalledExactlyOnceWith(seen, false, {
      stalls: MAX_ATTEMPTS,
      pagesDone: 0,
    });
    expect(finalizer.fail).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ attempts: MAX_ATTEMPTS, stalls: MAX_ATTEMPTS }),
      expect.objectContaining({ message: expect.stringContaining(`${MAX_ATTEMPTS} attempts`) }),
    );
  });

  it('counts the claim that resumes a deletion as an attempt', async () => {
    // Prepare
    const seen = aDeletion({ attempts: 1, stalls: MAX_ATTEMPTS - 2 });
    const { subject, deletions } = sweeper([seen]);

    // Act
    await subject.sweep();

    // Assess
    expect(deletions.claimStale).toHaveBeenCalledExactlyOnceWith(seen, true, {
      stalls: MAX_ATTEMPTS - 1,
      pagesDone: 0,
    });
  });

  it('starts the stalls again when the chains counted pages since the last claim: a deletion that moves is not stalled', async () => {
    // Prepare: one stall short of the verdict, but the round's chains have counted 7 pages
    // since the last claim saw 5 (a message that failed once left a gap longer than the stale
    // interval, and the chain went on after it).
    const seen = aDeletion({
      attempts: MAX_ATTEMPTS - 1,
      stalls: MAX_ATTEMPTS - 1,
      progressRound: 1,
      progressSeen: 5,
    });
    const chains = [aChain({ pagesDone: 3 }), aChain({ chainId: 'b'.repeat(20), pagesDone: 4 })];
    const { subject, deletions, finalizer } = sweeper([seen], claimAll, chains);

    // Act
    await subject.sweep();

    // Assess: resumed as its first stall since, with the pages it saw for the next claim
    expect(deletions.claimStale).toHaveBeenCalledExactlyOnceWith(seen, true, {
      stalls: 1,
      pagesDone: 7,
    });
    expect(finalizer.fail).not.toHaveBeenCalled();
  });

  it('gives the verdict when no page was counted since the last claim', async () => {
    // Prepare
    const seen = aDeletion({ stalls: MAX_ATTEMPTS - 1, progressRound: 1, progressSeen: 7 });
    const { subject, finalizer } = sweeper([seen], claimAll, [aChain({ pagesDone: 7 })]);

    // Act
    await subject.sweep();

    // Assess
    expect(finalizer.fail).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ stalledRound: 1 }),
      expect.objectContaining({ code: 'Stalled' }),
    );
  });

  it('gives the verdict again once given in the round, though a straggler settled a chain since', async () => {
    // Prepare: the verdict waited for a page open; its straggler settled the chain, which
    // cleared the stalls.
    const seen = aDeletion({ stalledRound: 1, progressRound: 1, progressSeen: 7 });
    const { subject, deletions, finalizer, queue } = sweeper([seen], claimAll, [
      aChain({ pagesDone: 8 }),
    ]);

    // Act
    await subject.sweep();

    // Assess: no resume (its messages would go to stopped chains), the verdict's claim again
    expect(deletions.claimStale).toHaveBeenCalledExactlyOnceWith(seen, false, expect.anything());
    expect(finalizer.fail).toHaveBeenCalledOnce();
    expect(queue.send).not.toHaveBeenCalled();
  });

  it.each<[string, Awaited<ReturnType<Finalizer['fail']>>, number]>([
    ['it failed', 'failed', 1],
    ['another run ended it first', 'fenced', 0],
  ])('counts a stalled deletion as failed when %s', async (_, outcome, failed) => {
    // Prepare
    const { subject, finalizer } = sweeper([aDeletion({ stalls: MAX_ATTEMPTS - 1 })]);
    finalizer.fail.mockResolvedValue(outcome);

    // Act
    const report = await subject.sweep();

    // Assess
    expect(report).toMatchObject({ stale: 1, resumed: 0, failed, messages: 0 });
  });

  it('gives a deletion with attempts left one more', async () => {
    // Prepare
    const { subject, finalizer } = sweeper([aDeletion({ stalls: MAX_ATTEMPTS - 2 })]);

    // Act
    const report = await subject.sweep();

    // Assess
    expect(finalizer.fail).not.toHaveBeenCalled();
    expect(report.resumed).toBe(1);
  });

  it('counts only the resumes since the last progress: a long deletion, or a retried one, is resumed', async () => {
    // Prepare: attempts far past the limit (earlier stalls, a retry), none since its progress
    const { subject, finalizer } = sweeper([aDeletion({ attempts: MAX_ATTEMPTS + 5 })]);

    // Act
    const report = await subject.sweep();

    // Assess
    expect(finalizer.fail).not.toHaveBeenCalled();
    expect(report.resumed).toBe(1);
  });

  it('leaves a deletion that moved (or that another sweeper claimed) alone', async () => {
    // Prepare
    const { subject, queue, finalizer, dispatcher } = sweeper([aDeletion()], (seen) =>
      duplicate({ ...seen, updatedAt: NOW.toISOString() }),
    );

    // Act
    const report = await subject.sweep();

    // Assess
    expect(report).toMatchObject({ stale: 1, resumed: 0, failed: 0, messages: 0 });
    expect(queue.send).not.toHaveBeenCalled();
    expect(finalizer.fail).not.toHaveBeenCalled();
    expect(dispatcher.dispatch).not.toHaveBeenCalled();
  });

  it('goes on to the next deletion after one it could not claim', async () => {
    // Prepare
    const { subject, dispatcher } = sweeper(
      [aDeletion({ state: 'PENDING' }), aDeletion({ state: 'PENDING', deletionId: OTHER_ID })],
      (seen) => (seen.deletionId === OTHER_ID ? claimAll(seen) : duplicate(seen)),
    );

    // Act
    const report = await subject.sweep();

    // Assess
    expect(report).toMatchObject({ stale: 2, resumed: 1 });
    expect(dispatcher.dispatch).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ deletionId: OTHER_ID }),
    );
  });
});

describe('Sweeper.sweep, scheduled deletions', () => {
  it('looks for scheduled deletions whose grace window is over now', async () => {
    // Prepare
    const { subject, index } = sweeper([]);

    // Act
    await subject.sweep();

    // Assess
    expect(index.due).toHaveBeenCalledExactlyOnceWith(NOW);
  });

  it('begins each due deletion, as it found it', async () => {
    // Prepare
    const due = aDeletion({ state: 'SCHEDULED' });
    const { subject, deletions } = sweeper([], claimAll, [], [due]);

    // Act
    await subject.sweep();

    // Assess
    expect(deletions.begin).toHaveBeenCalledExactlyOnceWith(due);
  });

  it('counts the due deletions it found and those it began (a cancel may win the race)', async () => {
    // Prepare
    const due = [
      aDeletion({ state: 'SCHEDULED' }),
      aDeletion({ state: 'SCHEDULED', deletionId: OTHER_ID }),
    ];
    const { subject, deletions } = sweeper([], claimAll, [], due);
    deletions.begin.mockResolvedValueOnce(fenced());

    // Act
    const report = await subject.sweep();

    // Assess
    expect(report).toMatchObject({ due: 2, begun: 1 });
  });

  it('dispatches nothing itself: the begun deletion reaches the dispatcher by the table stream', async () => {
    // Prepare
    const { subject, dispatcher } = sweeper([], claimAll, [], [aDeletion({ state: 'SCHEDULED' })]);

    // Act
    await subject.sweep();

    // Assess
    expect(dispatcher.dispatch).not.toHaveBeenCalled();
  });
});

describe('Sweeper.scheduled', () => {
  it('counts the deletions waiting out their grace window, from the index', async () => {
    // Prepare
    const { subject, index } = sweeper([]);
    index.scheduled.mockResolvedValue(4);

    // Act
    const scheduled = await subject.scheduled();

    // Assess
    expect(scheduled).toBe(4);
  });
});

describe('Sweeper and the DeletionEvents port', () => {
  it('reports each resume once, with the progress the deletion had when it was seen', async () => {
    // Prepare
    const seen = aDeletion({ updatedAt: '2026-03-01T11:50:00.000Z' });
    const { subject, events } = sweeper([seen]);

    // Act
    await subject.sweep();

    // Assess
    expect(events.resumed).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ deletionId: DELETION_ID, attempts: 2 }),
      '2026-03-01T11:50:00.000Z',
    );
  });

  it('reports no resume of a deletion it could not claim', async () => {
    // Prepare
    const { subject, events } = sweeper([aDeletion()], (seen) => duplicate(seen));

    // Act
    await subject.sweep();

    // Assess
    expect(events.resumed).not.toHaveBeenCalled();
  });

  it('reports no resume of a deletion it fails instead (the finalizer reports its end)', async () => {
    // Prepare
    const { subject, events } = sweeper([aDeletion({ stalls: MAX_ATTEMPTS - 1 })]);

    // Act
    await subject.sweep();

    // Assess
    expect(events.resumed).not.toHaveBeenCalled();
    expect(events.ended).not.toHaveBeenCalled();
  });
});

describe('Sweeper.oldestOpen', () => {
  it('reads every open deletion: a cutoff a day ahead of now', async () => {
    // Prepare
    const { subject, index } = sweeper([]);

    // Act
    await subject.oldestOpen();

    // Assess
    expect(index.stale).toHaveBeenCalledExactlyOnceWith(new Date(NOW.getTime() + 86_400_000));
  });

  it('finds the open deletion requested longest ago, with its age in seconds', async () => {
    // Prepare
    const at = (time: string) => ({ requestedAt: time, executeAfter: time });
    const older = aDeletion({ deletionId: OTHER_ID, ...at('2026-03-01T09:00:00.000Z') });
    const { subject } = sweeper([
      aDeletion(at('2026-03-01T11:00:00.000Z')),
      older,
      aDeletion(at('2026-03-01T10:00:00.000Z')),
    ]);

    // Act
    const oldest = await subject.oldestOpen();

    // Assess
    expect(oldest).toEqual({ deletion: older, ageSeconds: 3 * 3600 });
  });

  it('is undefined when no deletion is open', async () => {
    // Prepare
    const { subject } = sweeper([]);

    // Act
    const oldest = await subject.oldestOpen();

    // Assess
    expect(oldest).toBeUndefined();
  });

  it('never reports a negative age (a requester clock ahead of ours)', async () => {
    // Prepare
    const { subject } = sweeper([aDeletion({ requestedAt: '2026-03-01T12:00:05.000Z' })]);

    // Act
    const oldest = await subject.oldestOpen();

    // Assess
    expect(oldest?.ageSeconds).toBe(0);
  });

  it('claims nothing', async () => {
    // Prepare
    const { subject, deletions } = sweeper([aDeletion()]);

    // Act
    await subject.oldestOpen();

    // Assess
    expect(deletions.claimStale).not.toHaveBeenCalled();
  });
});

describe('Sweeper.sweep, an item that throws', () => {
  const THIRD_ID = '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d';
  const failures = () => vi.fn<SweepFailed>();

  it('goes on to the next due deletion, and to the stale ones, when a begin throws', async () => {
    // Prepare: the first due deletion's begin throws every time (a poison record)
    const due = [
      aDeletion({ state: 'SCHEDULED', tenant: 'poison' }),
      aDeletion({ state: 'SCHEDULED', deletionId: OTHER_ID }),
    ];
    const stale = [aDeletion({ state: 'PENDING', deletionId: THIRD_ID })];
    const { subject, deletions, dispatcher } = sweeper(stale, claimAll, [], due);
    deletions.begin.mockImplementation(async (deletion) => {
      if (deletion.tenant === 'poison') throw new Error('AccessDenied');
      return done;
    });
    const failed = failures();

    // Act
    const report = await subject.sweep({ failed });

    // Assess
    expect(deletions.begin).toHaveBeenLastCalledWith(due[1]);
    expect(dispatcher.dispatch).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ deletionId: THIRD_ID }),
    );
    expect(report).toMatchObject({ due: 2, begun: 1, stale: 1, resumed: 1, errors: 1 });
    expect(failed).toHaveBeenCalledExactlyOnceWith({
      step: 'begin deletion',
      keys: { tenant: 'poison', stream: 'logs', deletionId: DELETION_ID },
      error: new Error('AccessDenied'),
    });
  });

  it('goes on to the next stale deletion when a resume throws', async () => {
    // Prepare: the first stale deletion's dispatch throws
    const stale = [
      aDeletion({ state: 'PENDING' }),
      aDeletion({ state: 'PENDING', deletionId: OTHER_ID }),
    ];
    const { subject, dispatcher } = sweeper(stale);
    dispatcher.dispatch.mockRejectedValueOnce(new TypeError('a bug'));
    const failed = failures();

    // Act
    const report = await subject.sweep({ failed });

    // Assess
    expect(dispatcher.dispatch).toHaveBeenCalledTimes(2);
    expect(dispatcher.dispatch).toHaveBeenLastCalledWith(
      expect.objectContaining({ deletionId: OTHER_ID }),
    );
    expect(report).toMatchObject({ stale: 2, resumed: 1, errors: 1 });
    expect(failed).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({
        step: 'take on stale deletion',
        keys: { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
      }),
    );
  });

  it('goes on to the next stale deletion when its verdict (FAILED, Stalled) throws', async () => {
    // Prepare
    const stale = [
      aDeletion({ stalls: MAX_ATTEMPTS - 1 }),
      aDeletion({ stalls: MAX_ATTEMPTS - 1, deletionId: OTHER_ID }),
    ];
    const { subject, finalizer } = sweeper(stale);
    finalizer.fail.mockRejectedValueOnce(new Error('throttled'));
    const failed = failures();

    // Act
    const report = await subject.sweep({ failed });

    // Assess
    expect(finalizer.fail).toHaveBeenCalledTimes(2);
    expect(report).toMatchObject({ stale: 2, failed: 1, errors: 1 });
    expect(failed).toHaveBeenCalledOnce();
  });

  it('goes on to the next stale deletion when its claim throws', async () => {
    // Prepare
    const stale = [aDeletion(), aDeletion({ deletionId: OTHER_ID })];
    const { subject, queue } = sweeper(stale, (seen) => {
      if (seen.deletionId === DELETION_ID) throw new Error('poison');
      return claimAll(seen);
    });
    const failed = failures();

    // Act
    const report = await subject.sweep({ failed });

    // Assess
    expect(queue.send).toHaveBeenCalledOnce();
    expect(report).toMatchObject({ stale: 2, resumed: 1, errors: 1 });
  });

  it('sweeps the stale deletions when the due ones cannot be read', async () => {
    // Prepare
    const { subject, index, dispatcher } = sweeper([aDeletion({ state: 'PENDING' })]);
    index.due.mockImplementation(async function* () {
      yield* [];
      throw new Error('DynamoDB is unreachable');
    });
    const failed = failures();

    // Act
    const report = await subject.sweep({ failed });

    // Assess
    expect(dispatcher.dispatch).toHaveBeenCalledOnce();
    expect(report).toMatchObject({ due: 0, stale: 1, resumed: 1, errors: 1 });
    expect(failed).toHaveBeenCalledExactlyOnceWith({
      step: 'list due deletions',
      keys: {},
      error: new Error('DynamoDB is unreachable'),
    });
  });

  it('counts an item that throws even with nobody told of it: never a silent success', async () => {
    // Prepare
    const { subject, dispatcher } = sweeper([aDeletion({ state: 'PENDING' })]);
    dispatcher.dispatch.mockRejectedValue(new Error('poison'));

    // Act
    const report = await subject.sweep();

    // Assess
    expect(report).toMatchObject({ resumed: 0, errors: 1 });
  });

  it('begins no due deletion its hold names (its offboarding could not be looked at), and the others', async () => {
    // Prepare
    const due = [
      aDeletion({ state: 'SCHEDULED', tenant: 'held' }),
      aDeletion({ state: 'SCHEDULED', deletionId: OTHER_ID }),
    ];
    const { subject, deletions } = sweeper([], claimAll, [], due);

    // Act
    const report = await subject.sweep({ holds: (deletion) => deletion.tenant === 'held' });

    // Assess
    expect(deletions.begin).toHaveBeenCalledExactlyOnceWith(due[1]);
    expect(report).toMatchObject({ due: 2, begun: 1, held: 1 });
    expect(report).not.toHaveProperty('errors');
  });
});
