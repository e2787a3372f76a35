import { describe, expect, it } from 'vitest';
import { ReadWriteLock } from '../../../lib/local/write-lock.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('ReadWriteLock', () => {
  it('runs an exclusive task with nothing else in flight', async () => {
    const lock = new ReadWriteLock();
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
    const lock = new ReadWriteLock();
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
    const lock = new ReadWriteLock();

    await expect(lock.run(true, async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );

    await expect(lock.run(true, async () => 'after')).resolves.toBe('after');
  });

  it('does not starve a write behind a stream of reads: reads that arrive after it wait', async () => {
    const lock = new ReadWriteLock();
    const order: string[] = [];
    const read = (name: string) =>
      lock.run(false, async () => {
        await tick();
        order.push(name);
      });

    const first = read('read 1');
    const write = lock.run(true, async () => {
      order.push('write');
    });
    const later = read('read 2');
    await Promise.all([first, write, later]);

    expect(order).toEqual(['read 1', 'write', 'read 2']);
  });

  it('lets the reads queued behind a write in together once it is done', async () => {
    const lock = new ReadWriteLock();
    let inFlight = 0;
    let most = 0;
    const write = lock.run(true, tick);
    const reads = Array.from({ length: 3 }, () =>
      lock.run(false, async () => {
        most = Math.max(most, ++inFlight);
        await tick();
        inFlight--;
      }),
    );

    await Promise.all([write, ...reads]);

    expect(most).toBe(3);
  });
});
