import { describe, expect, it, vi } from 'vitest';
import { clockOf } from '../../../lib/core/index.ts';
import { KeyBudget } from '../../../lib/pipeline/index.ts';
import type { BudgetStore } from '../../../lib/store/index.ts';
import { NOW } from '../../helpers/records.ts';

/** A budget over a store that answers `waits` (milliseconds; 0 admits) in turn. */
function budget(waits: number[]) {
  const admit = vi.fn<BudgetStore['admit']>(async () => {
    const waitMs = waits.shift() ?? 0;
    return { admitted: waitMs === 0, waitMs };
  });
  const slept: number[] = [];
  const sleep = vi.fn(async (ms: number) => {
    slept.push(ms);
  });
  const keyBudget = new KeyBudget({
    budgets: { admit, refund: vi.fn(async () => {}) },
    keysPerSecond: 1000,
    pageSize: 1000,
    clock: clockOf(() => NOW),
    sleep,
  });
  return { keyBudget, slept };
}

const total = (slept: number[]) => slept.reduce((sum, ms) => sum + ms, 0);

describe('KeyBudget, a budget other workers keep taking first', () => {
  it('sleeps under a second in all, then sends the page back rather than sleeping on', async () => {
    // Prepare: each look finds the room just taken by another worker, 600 ms away again.
    const { keyBudget, slept } = budget([600, 600, 600, 600, 600, 600, 0]);

    // Act
    const seconds = await keyBudget.take('data');

    // Assess
    expect(total(slept)).toBeLessThan(1000);
    expect(seconds).toBeGreaterThanOrEqual(1);
  });

  it('still sleeps out short waits that fit in a second together', async () => {
    // Prepare
    const { keyBudget, slept } = budget([300, 400, 0]);

    // Act
    const seconds = await keyBudget.take('data');

    // Assess
    expect(seconds).toBe(0);
    expect(slept).toEqual([300, 400]);
  });
});
