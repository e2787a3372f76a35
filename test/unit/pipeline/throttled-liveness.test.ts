import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChainRecord,
  clockOf,
  type DeletionRecord,
  duplicate,
  ok,
  type PageMessage,
  pageMessage,
} from '../../../lib/core/index.ts';
import { DeletionFence, KeyBudget } from '../../../lib/pipeline/index.ts';
import { ChainPacer } from '../../../lib/pipeline/pace.ts';
import { PageWorker } from '../../../lib/pipeline/page-worker.ts';
import type { BudgetStore, DeletionStore } from '../../../lib/store/index.ts';
import { aChain, aDeletion, aPage, NOW } from '../../helpers/records.ts';

/**
 * A page held back by the bucket's key budget or its chain's pace is throttled, not stalled
 * (invariant 8): its message comes back within the fence's interval, and each return marks its
 * deletion's progress for the sweeper, which takes a deletion unmarked for three intervals for
 * stalled. Dead workers send nothing back and mark nothing: that deletion still goes stale.
 */
const s3 = mockClient(S3Client);
const STALE_AFTER_MS = 30_000;
const INTERVAL_SECONDS = 10;

/** A moving clock, and a deletion whose heartbeat is the store's conditional write. */
function deletionOf(clock: { now: number }) {
  let deletion: DeletionRecord = aDeletion({ updatedAt: new Date(clock.now).toISOString() });
  const marks: number[] = [clock.now];
  const heartbeat = vi.fn<DeletionStore['heartbeat']>(async (_ref, before) => {
    if (deletion.updatedAt >= before.toISOString()) return duplicate(deletion);
    deletion = { ...deletion, updatedAt: new Date(clock.now).toISOString() };
    marks.push(clock.now);
    return ok(deletion);
  });
  return { heartbeat, marks };
}

/** The longest time the deletion went unmarked, up to `until`: what the sweeper would see. */
const longestGap = (marks: number[], until: number) =>
  Math.max(...[...marks, until].slice(1).map((mark, i) => mark - (marks[i] ?? 0)));

/** A page worker whose budget or pace keeps sending the page back; the queue runs on `clock`. */
function throttled(chain: ChainRecord, budgetWaitMs: number) {
  const clock = { now: NOW.getTime() };
  const { heartbeat, marks } = deletionOf(clock);
  const sent: Array<{ message: PageMessage; seconds: number }> = [];
  const admit = vi.fn<BudgetStore['admit']>(async () => ({
    admitted: budgetWaitMs === 0,
    waitMs: budgetWaitMs,
  }));
  const pageWorker = new PageWorker({
    chains: {
      get: vi.fn(async () => chain),
      recordListing: vi.fn(),
      completePage: vi.fn(),
      slowDown: vi.fn(),
      takeSlot: vi.fn(),
      split: vi.fn(),
      markIndivisible: vi.fn(),
    },
    deletions: { get: vi.fn() },
    failures: { record: vi.fn() },
    fence: new DeletionFence({
      deletions: { heartbeat },
      intervalSeconds: INTERVAL_SECONDS,
      clock: clockOf(() => new Date(clock.now)),
    }),
    s3: new S3Client({ region: 'us-east-1' }),
    deleter: { deletePage: vi.fn() },
    queue: {
      send: vi.fn(async (messages: PageMessage[], seconds = 0) => {
        for (const message of messages) sent.push({ message, seconds });
      }),
    },
    finalizer: { finalize: vi.fn(), settle: vi.fn() },
    pageSize: 20,
    longestDelaySeconds: INTERVAL_SECONDS,
    budget: new KeyBudget({
      budgets: { admit, refund: vi.fn(async () => {}) },
      keysPerSecond: 1,
      pageSize: 20,
      clock: clockOf(() => new Date(clock.now)),
      longestWaitSeconds: INTERVAL_SECONDS,
    }),
    clock: clockOf(() => new Date(clock.now)),
  });
  /** Delivers the page, and each message it sends back when its delay is over, for `ms`. */
  const run = async (message: PageMessage, ms: number) => {
    const until = clock.now + ms;
    let next: PageMessage | undefined = message;
    while (next && clock.now < until) {
      sent.length = 0;
      await pageWorker.handle(next);
      const back: { message: PageMessage; seconds: number } | undefined = sent.at(-1);
      clock.now += (back?.seconds ?? 0) * 1000;
      next = back?.message;
    }
    return longestGap(marks, Math.min(clock.now, until));
  };
  return { run, marks, clock };
}

beforeEach(() => {
  s3.reset();
  s3.on(ListObjectsV2Command).resolves({ Contents: [], IsTruncated: false });
});

describe('a deletion whose pages wait on throttling', () => {
  it('is marked alive at least once per stale threshold while the key budget holds its page back', async () => {
    // Prepare: the budget asks for 200 s each time (shared by many deletions).
    const { run } = throttled(aChain({ lastPage: 0, cursor: { key: 'k' } }), 200_000);

    // Act
    const gap = await run(pageMessage(aChain(), 1), 600_000);

    // Assess
    expect(gap).toBeLessThan(STALE_AFTER_MS);
  });

  it("is marked alive at least once per stale threshold while its chain's pace holds its page back", async () => {
    // Prepare: a chain S3 slowed to a slot 200 s away.
    const chain = aChain({
      lastPage: 0,
      cursor: { key: 'k' },
      pace: 0.1,
      nextAt: NOW.getTime() + 200_000,
    });
    const { run } = throttled(chain, 0);

    // Act
    const gap = await run(pageMessage(chain, 1), 150_000);

    // Assess
    expect(gap).toBeLessThan(STALE_AFTER_MS);
  });
});

describe('the longest delay of a page sent back', () => {
  it('is the key budget’s longest wait, however long the budget asks for', async () => {
    // Prepare
    const budget = new KeyBudget({
      budgets: {
        admit: vi.fn(async () => ({ admitted: false, waitMs: 500_000 })),
        refund: vi.fn(async () => {}),
      },
      keysPerSecond: 1,
      pageSize: 20,
      clock: clockOf(() => NOW),
      longestWaitSeconds: 7,
    });

    // Act
    const seconds = await budget.take('data');

    // Assess
    expect(seconds).toBe(7);
  });

  it("is the pacer's longest delay, for a slot and for a refused page", async () => {
    // Prepare
    const chain = aChain({ pace: 0.1, nextAt: NOW.getTime() + 500_000 });
    const send = vi.fn(async () => {});
    const pacer = new ChainPacer({
      chains: {
        get: vi.fn(),
        slowDown: vi.fn(async () => ({ ok: true as const })),
        takeSlot: vi.fn(),
      },
      queue: { send },
      pageSize: 20,
      clock: clockOf(() => NOW),
      longestDelaySeconds: 7,
    });

    // Act
    const slot = pacer.delayTo(chain.nextAt);
    const gate = await pacer.gate(chain, pageMessage(chain, 1));
    const refused = await pacer.refused(chain, aPage({ page: 1 }), undefined);

    // Assess
    expect(slot).toBe(7);
    expect(gate).toEqual({ go: 'later', seconds: 7 });
    expect(refused.seconds).toBe(7);
    expect(send).toHaveBeenLastCalledWith(expect.any(Array), 7);
  });
});
