import { describe, expect, it } from 'vitest';
import { ShardProgress } from '../../../lib/local/stream-positions.ts';

describe('ShardProgress', () => {
  it('keeps the last record processed with every one before it', () => {
    const progress = new ShardProgress();
    progress.read([1n, 2n, 3n, 4n]);

    progress.done([2n, 4n]);
    expect(progress.position).toBeUndefined();

    progress.done([1n]);
    expect(progress.position).toBe(2n);

    progress.done([3n]);
    expect(progress.position).toBe(4n);
  });

  it('starts at a kept position, and stays there until the next record is processed', () => {
    const progress = new ShardProgress(10n);
    progress.read([11n, 12n]);

    progress.done([12n]);
    expect(progress.position).toBe(10n);

    progress.done([11n]);
    expect(progress.position).toBe(12n);
  });
});
