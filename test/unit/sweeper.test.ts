import { describe, expect, it, vi } from 'vitest';
import type { Dispatcher } from '../../lib/dispatch.ts';
import type { Finalizer } from '../../lib/finalizer.ts';
import type { DeletionRecord } from '../../lib/model.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import { Sweeper } from '../../lib/sweeper.ts';
import type { WorkQueue } from '../../lib/work-queue.ts';
import { fake } from '../helpers/fakes.ts';
import { aDeletion, aPage, CHAIN_ID, NOW } from '../helpers/records.ts';

function sweeper(
  stale: DeletionRecord[],
  claimed: (seen: DeletionRecord) => DeletionRecord | undefined,
) {
  const store = {
    stale: vi.fn<ProgressStore['stale']>(async function* () {
      yield* stale;
    }),
    claimStale: vi.fn<ProgressStore['claimStale']>(async (seen) => claimed(seen)),
    fail: vi.fn<ProgressStore['fail']>(async () => 'recorded'),
    openPages: vi.fn<ProgressStore['openPages']>(async function* () {
      yield aPage({ page: 4 });
    }),
  };
  const queue = { send: vi.fn<WorkQueue['send']>(async () => {}) };
  const dispatcher = {
    dispatch: vi.fn<Dispatcher['dispatch']>(async () => 'dispatched'),
    startChains: vi.fn<Dispatcher['startChains']>(async () => 2),
  };
  const finalizer = { finalize: vi.fn<Finalizer['finalize']>(async () => 'completed') };
  const subject = new Sweeper({
    store: fake<ProgressStore>(store),
    queue: fake<WorkQueue>(queue),
    dispatcher: fake<Dispatcher>(dispatcher),
    finalizer: fake<Finalizer>(finalizer),
    staleAfterSeconds: 300,
    maxAttempts: 3,
    now: () => NOW,
  });
  return { subject, store, queue, dispatcher, finalizer };
}

describe('Sweeper', () => {
  it('looks for deletions without progress for the stale threshold', async () => {
    const { subject, store } = sweeper([], () => undefined);

    await subject.sweep();

    expect(store.stale).toHaveBeenCalledWith(new Date(NOW.getTime() - 300_000));
  });

  it('resumes a running deletion: its open pages and the next page of every open chain', async () => {
    const running = aDeletion({ attempts: 1 });
    const { subject, queue, dispatcher } = sweeper([running], () => aDeletion({ attempts: 2 }));

    const report = await subject.sweep();

    expect(report).toEqual({ stale: 1, resumed: 1, failed: 0, messages: 3 });
    expect(queue.send).toHaveBeenCalledWith([
      expect.objectContaining({ type: 'page', chainId: CHAIN_ID, page: 4, round: 1 }),
    ]);
    const select = dispatcher.startChains.mock.calls[0]?.[1];
    expect(select?.({ chainId: CHAIN_ID, round: 1, prefix: 'p/', lastPage: 2, ended: false })).toBe(
      true,
    );
    expect(select?.({ chainId: CHAIN_ID, round: 1, prefix: 'p/', lastPage: 2, ended: true })).toBe(
      false,
    );
  });

  it('re-dispatches a pending deletion', async () => {
    const pending = aDeletion({ state: 'PENDING' });
    const { subject, dispatcher } = sweeper([pending], () =>
      aDeletion({ state: 'PENDING', attempts: 2 }),
    );

    await subject.sweep();

    expect(dispatcher.dispatch).toHaveBeenCalledWith(
      expect.objectContaining({ state: 'PENDING', attempts: 2 }),
    );
  });

  it('verifies a deletion whose round is done but was never finalized', async () => {
    const done = aDeletion({ chainsTotal: 1, chainsEnded: 1, pagesListed: 2, pagesDone: 2 });
    const { subject, finalizer, queue } = sweeper([done], () => ({ ...done, attempts: 2 }));

    await subject.sweep();

    expect(finalizer.finalize).toHaveBeenCalledTimes(1);
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('marks a deletion FAILED (Stalled) once it used up its attempts', async () => {
    const { subject, store, queue } = sweeper([aDeletion({ attempts: 3 })], () =>
      aDeletion({ attempts: 4 }),
    );

    const report = await subject.sweep();

    expect(report.failed).toBe(1);
    expect(store.fail).toHaveBeenCalledWith(
      expect.objectContaining({ attempts: 4 }),
      expect.objectContaining({ code: 'Stalled' }),
    );
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('leaves a deletion that moved (or that another sweeper claimed) alone', async () => {
    const { subject, queue, store } = sweeper([aDeletion()], () => undefined);

    const report = await subject.sweep();

    expect(report).toEqual({ stale: 1, resumed: 0, failed: 0, messages: 0 });
    expect(queue.send).not.toHaveBeenCalled();
    expect(store.fail).not.toHaveBeenCalled();
  });
});
