import { describe, expect, it, vi } from 'vitest';
import { clockOf } from '../../../lib/core/index.ts';
import { KeyBudget } from '../../../lib/pipeline/index.ts';
import type { BudgetStore } from '../../../lib/store/index.ts';
import { NOW } from '../../helpers/records.ts';

/** A budget over a store that answers `waits` (milliseconds; 0 admits) in turn. */
function budget(waits: number[], keysPerSecond = 500, pageSize = 1000) {
  const admit = vi.fn<BudgetStore['admit']>(async () => {
    const waitMs = waits.shift() ?? 0;
    return { admitted: waitMs === 0, waitMs };
  });
  const sleep = vi.fn(async (_ms: number) => {});
  const refund = vi.fn<BudgetStore['refund']>(async () => {});
  const keyBudget = new KeyBudget({
    budgets: { admit, refund },
    keysPerSecond,
    pageSize,
    clock: clockOf(() => NOW),
    sleep,
  });
  return { keyBudget, admit, sleep, refund };
}

describe('KeyBudget', () => {
  it('asks for a whole page at the configured rate, with room for at least one page', async () => {
    // Prepare
    const { keyBudget, admit } = budget([0], 500, 1000);

    // Act
    const seconds = await keyBudget.take('data');

    // Assess
    expect(seconds).toBe(0);
    expect(admit).toHaveBeenCalledExactlyOnceWith('data', 1000, 500, 1000, NOW.getTime());
  });

  it('gives a budget above a page a second a burst of one second', async () => {
    // Prepare
    const { keyBudget, admit } = budget([0], 5000, 1000);

    // Act
    await keyBudget.take('data');

    // Assess
    expect(admit).toHaveBeenCalledWith('data', 1000, 5000, 5000, NOW.getTime());
  });

  it('sleeps a wait under a second, then asks again', async () => {
    // Prepare
    const { keyBudget, admit, sleep } = budget([300, 0]);

    // Act
    const seconds = await keyBudget.take('data');

    // Assess
    expect(seconds).toBe(0);
    expect(sleep).toHaveBeenCalledExactlyOnceWith(300);
    expect(admit).toHaveBeenCalledTimes(2);
  });

  it('answers a longer wait in whole seconds, to delay the message by, without sleeping', async () => {
    // Prepare
    const { keyBudget, sleep } = budget([2_100]);

    // Act
    const seconds = await keyBudget.take('data');

    // Assess
    expect(seconds).toBe(3);
    expect(sleep).not.toHaveBeenCalled();
  });

  it('gives back what a short page did not use, and nothing for a full one', async () => {
    // Prepare
    const { keyBudget, refund } = budget([], 500, 1000);

    // Act
    await keyBudget.giveBack('data', 1000);
    await keyBudget.giveBack('data', 120);

    // Assess
    expect(refund).toHaveBeenCalledExactlyOnceWith('data', 880, 500);
  });

  it("never asks for more than SQS's longest delay (900 s)", async () => {
    // Prepare
    const { keyBudget } = budget([3_600_000]);

    // Act + Assess
    expect(await keyBudget.take('data')).toBe(900);
  });
});
