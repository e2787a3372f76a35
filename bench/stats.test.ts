import { describe, expect, it } from 'vitest';
import { percentile, summarize } from './stats.ts';

describe('percentile', () => {
  it.each([
    [[1, 2, 3, 4], 50, 2.5],
    [[4, 1, 3, 2], 50, 2.5],
    [[7], 95, 7],
    [[10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 95, 95.5],
    [[1, 2, 3], 0, 1],
    [[1, 2, 3], 100, 3],
  ])('of %j at p%d is %d (linear between closest ranks)', (values, p, expected) => {
    expect(percentile(values, p)).toBeCloseTo(expected, 10);
  });

  it('refuses an empty sample and a percentile outside 0..100', () => {
    expect(() => percentile([], 50)).toThrow(/empty/);
    expect(() => percentile([1], 101)).toThrow(/0\.\.100/);
  });

  it('leaves its input unsorted', () => {
    const values = [3, 1, 2];

    percentile(values, 50);

    expect(values).toEqual([3, 1, 2]);
  });
});

describe('summarize', () => {
  it('gives count, extremes, percentiles and mean', () => {
    expect(summarize([5, 1, 3])).toEqual({ n: 3, min: 1, p50: 3, p95: 4.8, max: 5, mean: 3 });
  });
});
