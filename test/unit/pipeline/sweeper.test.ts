import { describe, expect, it, vi } from 'vitest';
import type { Dispatcher } from '../../lib/dispatch.ts';
import type { Finalizer } from '../../lib/finalizer.ts';
import type { ChainRecord, DeletionRecord } from '../../lib/model.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import { Sweeper } from '../../lib/sweeper.ts';
import type { WorkQueue } from '../../lib/work-queue.ts';
import { fake } from '../helpers/fakes.ts';
import { aChain, aDeletion, aPage, NOW } from '../helpers/records.ts';

const A = 'a'.repeat(20);
const B = 'b'.repeat(20);
const C = 'c'.repeat(20);

function sweeper(
  stale: DeletionRecord[],
  claimed: (seen: DeletionRecord) => DeletionRecord | undefined,
  chains: ChainRecord[] = [],
) {
  const store = {
    stale: vi.fn<ProgressStore['stale']>(async function* () {
      yield* stale;
    }),
    claimStale: vi.fn<ProgressStore['claimStale']>(async (seen) => claimed(seen)),
    fail: vi.fn<ProgressStore['fail']>(async () => 'recorded'),
    totals: vi.fn<ProgressStore['totals']>(async () => ({
      objectsDeleted: 70,
      bytesDeleted: 700,
      failedObjects: 0,
    })),
    chains: vi.fn<ProgressStore['chains']>(async function* () {
      yield* chains;
    }),
    settleChain: vi.fn<ProgressStore['settleChain']>(async () => 'recorded'),
  };
  const queue = { send: vi.fn<WorkQueue['send']>(async () => {}) };
  const dispatcher = { dispatch: vi.fn<Dispatcher['dispatch']>(async () => 'dispatched') };
  const finalizer = {
    finalize: vi.fn<Finalizer['finalize']>(async () => 'completed'),
    finalizeIfReady: vi.fn<Finalizer['finalizeIfReady']>(async () => 'completed'),
  };
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

  it('resumes a running deletion from its chains: open pages and the next page of each', async () => {
    const chains = [
      aChain({ chainId: A, lastPage: 4, open: { '4': aPage({ chainId: A, page: 4 }) } }),
      aChain({ chainId: B, lastPage: 2 }),
      aChain({ chainId: C, lastPage: 7, ended: true, settled: true }),
    ];
    const { subject, queue, store } = sweeper(
      [aDeletion({ attempts: 1 })],
      () => aDeletion({ attempts: 2, chainsTotal: 3 }),
      chains,
    );

    const report = await subject.sweep();

    expect(report).toEqual({ stale: 1, resumed: 1, failed: 0, messages: 3 });
    expect(
      queue.send.mock.calls[0]?.[0].map(
        (message) => message.type === 'page' && [message.chainId, message.page],
      ),
    ).toEqual([
      [A, 4],
      [A, 5],
      [B, 3],
    ]);
    expect(store.settleChain).not.toHaveBeenCalled();
  });

  it('settles a chain that ended with nothing open but was never counted, then verifies', async () => {
    const ended = aChain({ chainId: C, lastPage: 3, ended: true, settled: false });
    const { subject, store, finalizer } = sweeper(
      [aDeletion()],
      () => aDeletion({ attempts: 2, chainsTotal: 1 }),
      [ended],
    );

    await subject.sweep();

    expect(store.settleChain).toHaveBeenCalledWith(expect.anything(), ended);
    expect(finalizer.finalizeIfReady).toHaveBeenCalledTimes(1);
  });

  it('re-dispatches a pending deletion', async () => {
    const { subject, dispatcher } = sweeper([aDeletion({ state: 'PENDING' })], () =>
      aDeletion({ state: 'PENDING', attempts: 2 }),
    );

    await subject.sweep();

    expect(dispatcher.dispatch).toHaveBeenCalledWith(
      expect.objectContaining({ state: 'PENDING', attempts: 2 }),
    );
  });

  it('verifies a deletion whose round is done but was never finalized', async () => {
    const done = aDeletion({ chainsTotal: 2, chainsSettled: 2 });
    const { subject, finalizer, queue } = sweeper([done], () => ({ ...done, attempts: 2 }));

    await subject.sweep();

    expect(finalizer.finalize).toHaveBeenCalledTimes(1);
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('marks a deletion FAILED (Stalled) with its totals once it used up its attempts', async () => {
    const { subject, store, queue } = sweeper([aDeletion({ attempts: 3 })], () =>
      aDeletion({ attempts: 4 }),
    );

    const report = await subject.sweep();

    expect(report.failed).toBe(1);
    expect(store.fail).toHaveBeenCalledWith(
      expect.objectContaining({ attempts: 4, objectsDeleted: 70, bytesDeleted: 700 }),
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
