import { describe, expect, it, vi } from 'vitest';
import {
  type ChainRecord,
  clockOf,
  type DeletionRecord,
  duplicate,
  fenced,
  ok,
} from '../../../lib/core/index.ts';
import { DeletionFence } from '../../../lib/pipeline/index.ts';
import type { DeletionStore } from '../../../lib/store/index.ts';
import { aChain, aDeletion, NOW } from '../../helpers/records.ts';

const INTERVAL_SECONDS = 60;
const OTHER_ID = '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';

/** A fence over a deletion store whose heartbeat answers `answer`, and a clock a test moves. */
function fenceOver(
  answer: Awaited<ReturnType<DeletionStore['heartbeat']>> = duplicate(aDeletion()),
  capacity?: number,
) {
  let now = NOW;
  const heartbeat = vi.fn<DeletionStore['heartbeat']>(async () => answer);
  const fence = new DeletionFence({
    deletions: { heartbeat },
    intervalSeconds: INTERVAL_SECONDS,
    clock: clockOf(() => now),
    ...(capacity !== undefined ? { capacity } : {}),
  });
  const later = (seconds: number) => {
    now = new Date(NOW.getTime() + seconds * 1000);
  };
  return { fence, heartbeat, later };
}

/** The chain of the `index`th deletion (each its own id). */
const chainOf = (index: number): ChainRecord =>
  aChain({ deletionId: `${String(index).padStart(8, '0')}-0000-4000-8000-000000000000` });

describe('DeletionFence.isRunning', () => {
  it('marks progress on the deletion, with the start of the interval as the cutoff', async () => {
    // Prepare
    const { fence, heartbeat } = fenceOver();
    const chain = aChain();

    // Act
    await fence.isRunning(chain);

    // Assess
    expect(heartbeat).toHaveBeenCalledExactlyOnceWith(
      chain,
      new Date(NOW.getTime() - INTERVAL_SECONDS * 1000),
    );
  });

  it('asks nothing for a chain registered less than an interval ago: its round was starting then', async () => {
    // Prepare
    const { fence, heartbeat, later } = fenceOver(fenced(aDeletion({ state: 'FAILED' })));
    const chain = aChain({ registeredAt: NOW.getTime() });
    later(INTERVAL_SECONDS - 1);

    // Act
    const running = await fence.isRunning(chain);

    // Assess
    expect(running).toBe(true);
    expect(heartbeat).not.toHaveBeenCalled();
  });

  it('asks, as for any chain, once its registration is an interval old', async () => {
    // Prepare
    const { fence, heartbeat, later } = fenceOver(fenced(aDeletion({ state: 'FAILED' })));
    const chain = aChain({ registeredAt: NOW.getTime() });
    later(INTERVAL_SECONDS);

    // Act
    const running = await fence.isRunning(chain);

    // Assess
    expect(running).toBe(false);
    expect(heartbeat).toHaveBeenCalledOnce();
  });

  it('asks the deletion once per interval, however many pages ask', async () => {
    // Prepare
    const { fence, heartbeat, later } = fenceOver();

    // Act
    const answers = [await fence.isRunning(aChain())];
    later(10);
    answers.push(await fence.isRunning(aChain({ chainId: 'b'.repeat(20) })));
    later(INTERVAL_SECONDS - 1);
    answers.push(await fence.isRunning(aChain()));

    // Assess
    expect(answers).toEqual([true, true, true]);
    expect(heartbeat).toHaveBeenCalledTimes(1);
  });

  it('asks again once the interval has passed', async () => {
    // Prepare
    const { fence, heartbeat, later } = fenceOver();
    await fence.isRunning(aChain());

    // Act
    later(INTERVAL_SECONDS);
    await fence.isRunning(aChain());

    // Assess
    expect(heartbeat).toHaveBeenCalledTimes(2);
  });

  it('learns within one interval that a deletion stopped running', async () => {
    // Prepare
    const { fence, heartbeat, later } = fenceOver();
    await fence.isRunning(aChain());
    heartbeat.mockResolvedValue(fenced(aDeletion({ state: 'FAILED' })));

    // Act
    later(INTERVAL_SECONDS);
    const running = await fence.isRunning(aChain());

    // Assess
    expect(running).toBe(false);
  });

  it('drops work for a deletion that is not running, without asking again in the interval', async () => {
    // Prepare
    const { fence, heartbeat, later } = fenceOver(fenced(aDeletion({ state: 'COMPLETED' })));

    // Act
    const first = await fence.isRunning(aChain());
    later(INTERVAL_SECONDS - 1);
    const second = await fence.isRunning(aChain());

    // Assess
    expect([first, second]).toEqual([false, false]);
    expect(heartbeat).toHaveBeenCalledTimes(1);
  });

  it('asks again, within the interval, for a chain of another round', async () => {
    // Prepare
    const { fence, heartbeat } = fenceOver();
    await fence.isRunning(aChain({ round: 1 }));

    // Act
    await fence.isRunning(aChain({ round: 2 }));

    // Assess
    expect(heartbeat).toHaveBeenCalledTimes(2);
  });

  it('answers for each deletion apart', async () => {
    // Prepare
    const { fence, heartbeat } = fenceOver();
    heartbeat.mockImplementation(async (ref) =>
      ref.deletionId === OTHER_ID ? fenced(aDeletion({ state: 'FAILED' })) : ok(aDeletion()),
    );

    // Act
    const running = await fence.isRunning(aChain());
    const other = await fence.isRunning(aChain({ deletionId: OTHER_ID }));

    // Assess
    expect([running, other]).toEqual([true, false]);
  });
});

describe.each<[string, Awaited<ReturnType<DeletionStore['heartbeat']>>, boolean]>([
  ['marked progress on a RUNNING deletion', ok(aDeletion()), true],
  ['found it RUNNING, marked a moment ago by another worker', duplicate(aDeletion()), true],
  ['found it COMPLETED', fenced(aDeletion({ state: 'COMPLETED' })), false],
  ['found it FAILED', fenced(aDeletion({ state: 'FAILED' })), false],
  ['found it PENDING (between rounds)', fenced(aDeletion({ state: 'PENDING' })), false],
  ['found it RUNNING another round', fenced(aDeletion({ round: 2 })), false],
  ['found it RUNNING another generation', duplicate(aDeletion({ generation: 2 })), false],
  ['found no deletion at all', fenced<DeletionRecord>(), false],
])('when the heartbeat %s', (_, answer, expected) => {
  it(`answers ${expected}`, async () => {
    // Prepare
    const { fence } = fenceOver(answer);

    // Act
    const running = await fence.isRunning(aChain({ round: 1, generation: 1 }));

    // Assess
    expect(running).toBe(expected);
  });
});

describe('DeletionFence capacity', () => {
  it('forgets the deletion it learned about longest ago once it holds more than its capacity', async () => {
    // Prepare
    const { fence, heartbeat } = fenceOver(ok(aDeletion()), 2);
    for (const index of [1, 2, 3]) await fence.isRunning(chainOf(index));
    heartbeat.mockClear();

    // Act
    await fence.isRunning(chainOf(1));

    // Assess
    expect(heartbeat).toHaveBeenCalledTimes(1);
  });

  it('keeps the deletions it learned about last', async () => {
    // Prepare
    const { fence, heartbeat } = fenceOver(ok(aDeletion()), 2);
    for (const index of [1, 2, 3]) await fence.isRunning(chainOf(index));
    heartbeat.mockClear();

    // Act
    await fence.isRunning(chainOf(2));
    await fence.isRunning(chainOf(3));

    // Assess
    expect(heartbeat).not.toHaveBeenCalled();
  });

  it('holds 1,000 deletions by default', async () => {
    // Prepare
    const { fence, heartbeat } = fenceOver(ok(aDeletion()));
    for (let index = 0; index <= 1000; index++) await fence.isRunning(chainOf(index));
    heartbeat.mockClear();

    // Act
    await fence.isRunning(chainOf(1));
    await fence.isRunning(chainOf(0));

    // Assess: the second of 1,001 is still held, the first is not.
    expect(heartbeat.mock.calls.map(([ref]) => ref.deletionId)).toEqual([chainOf(0).deletionId]);
  });
});

describe('DeletionFence.isRunning, pages asking at once', () => {
  it('shares one look among the pages of a deletion that ask while it is under way', async () => {
    // Prepare: a heartbeat that answers only once every page has asked.
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const heartbeat = vi.fn<DeletionStore['heartbeat']>(async () => {
      await answered;
      return duplicate(aDeletion());
    });
    const fence = new DeletionFence({
      deletions: { heartbeat },
      intervalSeconds: INTERVAL_SECONDS,
      clock: clockOf(() => NOW),
    });

    // Act
    const asked = [aChain(), aChain(), aChain(), chainOf(1)].map((chain) => fence.isRunning(chain));
    answer();
    const running = await Promise.all(asked);

    // Assess: one write for the three pages of one deletion, one for the other deletion.
    expect(running).toEqual([true, true, true, true]);
    expect(heartbeat).toHaveBeenCalledTimes(2);
  });

  it('asks again once a shared look has failed', async () => {
    // Prepare
    const heartbeat = vi
      .fn<DeletionStore['heartbeat']>()
      .mockRejectedValueOnce(new Error('refused'))
      .mockResolvedValue(duplicate(aDeletion()));
    const fence = new DeletionFence({
      deletions: { heartbeat },
      intervalSeconds: INTERVAL_SECONDS,
      clock: clockOf(() => NOW),
    });

    // Act
    const failed = await Promise.allSettled([fence.isRunning(aChain()), fence.isRunning(aChain())]);
    const again = await fence.isRunning(aChain());

    // Assess
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(again).toBe(true);
    expect(heartbeat).toHaveBeenCalledTimes(2);
  });
});
