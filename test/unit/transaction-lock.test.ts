import { describe, expect, it } from 'vitest';
import { TransactionLock } from '../../lib/local/transaction-lock.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('TransactionLock', () => {
  it('runs an exclusive task with nothing else in flight', async () => {
    const lock = new TransactionLock();
    let inFlight = 0;
    let overlapDuringExclusive = 0;
    const task = (exclusive: boolean) =>
      lock.run(exclusive, async () => {
        inFlight++;
        await tick();
        if (exclusive && inFlight > 1) overlapDuringExclusive++;
        await tick();
        inFlight--;
      });

    await Promise.all([task(false), task(false), task(true), task(false), task(true), task(false)]);

    expect(overlapDuringExclusive).toBe(0);
  });

  it('lets shared tasks run side by side', async () => {
    const lock = new TransactionLock();
    let inFlight = 0;
    let most = 0;

    await Promise.all(
      Array.from({ length: 4 }, () =>
        lock.run(false, async () => {
          most = Math.max(most, ++inFlight);
          await tick();
          inFlight--;
        }),
      ),
    );

    expect(most).toBe(4);
  });

  it('releases the lock when a task throws', async () => {
    const lock = new TransactionLock();

    await expect(lock.run(true, async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );

    await expect(lock.run(true, async () => 'after')).resolves.toBe('after');
  });
});
