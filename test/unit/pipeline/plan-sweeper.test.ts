import { describe, expect, it, vi } from 'vitest';
import {
  clockOf,
  duplicate,
  NO_COUNTS,
  newPlan,
  ok,
  type PlanChainRecord,
  type PlanPageMessage,
  type PlanRecord,
} from '../../../lib/core/index.ts';
import {
  PlanSweeper,
  type PlanSweeperOptions,
  type SweepFailed,
} from '../../../lib/pipeline/index.ts';
import { aStream, NOW } from '../../helpers/records.ts';

const PLAN_ID = 'b2c4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f';
const STALE_AFTER_SECONDS = 300;
const MAX_ATTEMPTS = 3;

const aPlan = (overrides: Partial<PlanRecord> = {}): PlanRecord => ({
  ...newPlan(aStream(), PLAN_ID, new Date(NOW.getTime() - 3_600_000), {
    pageSize: 1000,
    workerConcurrency: 20,
  }),
  ...overrides,
});

const aPlanChain = (chainId: string, page: number, ended = false): PlanChainRecord => ({
  planId: PLAN_ID,
  tenant: 'acme',
  chainId,
  prefix: `streams/acme/logs/1/${chainId}/`,
  page,
  ended,
  ...NO_COUNTS,
});

/**
 * A plan store in memory whose claim is conditional as the table's is: won only while the plan
 * is open and unchanged since it was seen.
 */
function sweeperOf(stored: PlanRecord, chains: PlanChainRecord[]) {
  let plan = stored;
  const sent: PlanPageMessage[] = [];
  const plans = {
    open: vi.fn<PlanSweeperOptions['plans']['open']>(async function* () {
      yield plan;
    }),
    claim: vi.fn<PlanSweeperOptions['plans']['claim']>(async (seen, look, now) => {
      const open = plan.state === 'PENDING' || plan.state === 'RUNNING';
      if (!open || seen.updatedAt !== plan.updatedAt) return duplicate();
      plan = { ...plan, ...look, updatedAt: now.toISOString() };
      return ok(plan);
    }),
    chains: async function* () {
      yield* chains;
    },
    fail: vi.fn<PlanSweeperOptions['plans']['fail']>(async (_, reason) => {
      plan = { ...plan, state: 'FAILED', reason };
      return ok(undefined);
    }),
  } satisfies PlanSweeperOptions['plans'];
  const planner = { finalizeIfReady: vi.fn(async () => true) };
  const sweeper = new PlanSweeper({
    plans,
    planner,
    queue: { send: async (messages) => void sent.push(...messages) },
    staleAfterSeconds: STALE_AFTER_SECONDS,
    maxAttempts: MAX_ATTEMPTS,
    clock: clockOf(() => NOW),
  });
  return { sweeper, plans, planner, sent, plan: () => plan };
}

describe('PlanSweeper', () => {
  it('looks only at plans started, or last looked at, longer ago than the stale interval', async () => {
    // Arrange
    const { sweeper, plans } = sweeperOf(aPlan(), []);

    // Act
    await sweeper.sweep();

    // Assess
    expect(plans.open).toHaveBeenCalledWith(new Date(NOW.getTime() - STALE_AFTER_SECONDS * 1000));
  });

  it('sends again the next page of every chain of a running plan that counted nothing', async () => {
    // Arrange: a page message failed every delivery; one chain had ended before
    const chains = [aPlanChain('a', 3), aPlanChain('b', 2, true), aPlanChain('c', 0)];
    const { sweeper, sent, plan } = sweeperOf(aPlan({ state: 'RUNNING', pagesSeen: 5 }), chains);

    // Act
    const report = await sweeper.sweep();

    // Assess
    expect(report).toEqual({ looked: 1, resumed: 1, failed: 0 });
    expect(sent.map(({ chainId, page }) => [chainId, page])).toEqual([
      ['a', 3],
      ['c', 0],
    ]);
    expect(plan()).toMatchObject({ state: 'RUNNING', pagesSeen: 5, stalls: 1 });
  });

  it('leaves a plan that counted pages since the last look to go on, its stalls forgotten', async () => {
    // Arrange
    const chains = [aPlanChain('a', 4), aPlanChain('c', 2)];
    const { sweeper, sent, plan } = sweeperOf(
      aPlan({ state: 'RUNNING', pagesSeen: 5, stalls: 2 }),
      chains,
    );

    // Act
    const report = await sweeper.sweep();

    // Assess
    expect(report).toEqual({ looked: 1, resumed: 0, failed: 0 });
    expect(sent).toEqual([]);
    expect(plan()).toMatchObject({ state: 'RUNNING', pagesSeen: 6, stalls: 0 });
  });

  it('completes a plan whose chains have all ended, when the step after the last page was lost', async () => {
    // Arrange
    const chains = [aPlanChain('a', 2, true), aPlanChain('b', 1, true)];
    const { sweeper, sent, planner } = sweeperOf(
      aPlan({ state: 'RUNNING', chainsTotal: 2, chainsSettled: 2, pagesSeen: 3 }),
      chains,
    );

    // Act
    await sweeper.sweep();

    // Assess
    expect(planner.finalizeIfReady).toHaveBeenCalledOnce();
    expect(sent).toEqual([]);
  });

  it('starts a pending plan again by its claim alone (a write to the plan is a new stream record)', async () => {
    // Arrange
    const { sweeper, sent, plans, plan, planner } = sweeperOf(aPlan(), []);

    // Act
    const report = await sweeper.sweep();

    // Assess: nothing else (no message, no verification): the claim's record starts it
    expect(report).toEqual({ looked: 1, resumed: 1, failed: 0 });
    expect(plans.claim).toHaveBeenCalledOnce();
    expect(sent).toEqual([]);
    expect(planner.finalizeIfReady).not.toHaveBeenCalled();
    expect(plan()).toMatchObject({ state: 'PENDING', stalls: 1 });
  });

  it('ends a plan FAILED, Stalled, once it counted nothing after every attempt', async () => {
    // Arrange: looked at twice already with nothing counted
    const chains = [aPlanChain('a', 1)];
    const { sweeper, sent, plan } = sweeperOf(
      aPlan({ state: 'RUNNING', pagesSeen: 1, stalls: MAX_ATTEMPTS - 1 }),
      chains,
    );

    // Act
    const report = await sweeper.sweep();

    // Assess
    expect(report).toEqual({ looked: 1, resumed: 0, failed: 1 });
    expect(sent).toEqual([]);
    expect(plan()).toMatchObject({ state: 'FAILED', reason: { code: 'Stalled' } });
  });

  it('does nothing with a plan another sweeper claimed first, or that ended since it was seen', async () => {
    // Arrange
    const seen = aPlan({ state: 'RUNNING' });
    const { sweeper, plans, sent } = sweeperOf({ ...seen, state: 'COMPLETED' }, [
      aPlanChain('a', 0),
    ]);
    plans.open.mockImplementation(async function* () {
      yield seen;
    });

    // Act
    const report = await sweeper.sweep();

    // Assess
    expect(report).toEqual({ looked: 1, resumed: 0, failed: 0 });
    expect(sent).toEqual([]);
    expect(plans.fail).not.toHaveBeenCalled();
  });

  it('goes on to the next plan when a look throws, and reports the plan it could not look at', async () => {
    // Arrange: a plan whose look fails every time, seen before one that stopped counting
    const poison = aPlan({ tenant: 'poison', planId: 'c3d5e7f9-2b4c-4d6e-9f0a-1b2c3d4e5f60' });
    const { sweeper, plans, plan } = sweeperOf(aPlan(), []);
    const stored = plan();
    plans.open.mockImplementation(async function* () {
      yield poison;
      yield stored;
    });
    plans.claim.mockRejectedValueOnce(new Error('a bug'));
    const failed = vi.fn<SweepFailed>();

    // Act
    const report = await sweeper.sweep({ failed });

    // Assess
    expect(report).toEqual({ looked: 2, resumed: 1, failed: 0, errors: 1 });
    expect(plan()).toMatchObject({ stalls: 1 });
    expect(failed).toHaveBeenCalledExactlyOnceWith({
      step: 'look at plan',
      keys: { tenant: 'poison', stream: 'logs', planId: poison.planId },
      error: new Error('a bug'),
    });
  });
});
