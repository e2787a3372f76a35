/** Summary statistics of a sample, as the benchmark reports them. */
export interface Summary {
  n: number;
  min: number;
  p50: number;
  p95: number;
  max: number;
  mean: number;
}

/**
 * The `p`-th percentile (0..100) by linear interpolation between closest ranks (the method of
 * NumPy's default and of Excel's PERCENTILE.INC), so p50 of an even sample is the midpoint.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of an empty sample');
  if (p < 0 || p > 100) throw new Error(`percentile must be within 0..100 (got ${p})`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.ceil(rank);
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  return low + (high - low) * (rank - below);
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new Error('summary of an empty sample');
  return {
    n: values.length,
    min: Math.min(...values),
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: Math.max(...values),
    mean: values.reduce((sum, value) => sum + value, 0) / values.length,
  };
}

/** Rounds for reports: `round(1234.5678, 1)` is 1234.6. */
export const round = (value: number, digits = 0) => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};
