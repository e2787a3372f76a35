import { describe, expect, it } from 'vitest';
import { failedIndexes } from '../../../lib/local/batch-outcomes.ts';
import { rateSeconds } from '../../../lib/local/template.ts';

describe('failedIndexes (a partial batch response, as Lambda reads it)', () => {
  const ids = ['m0', 'm1', 'm2'];

  it.each([
    ['an empty list', { batchItemFailures: [] }],
    ['a null list', { batchItemFailures: null }],
    ['no list', {}],
    ['no response', undefined],
  ])('takes %s as a complete success', (_, response) => {
    expect(failedIndexes(response, ids)).toEqual([]);
  });

  it('fails the records it names', () => {
    expect(failedIndexes({ batchItemFailures: [{ itemIdentifier: 'm1' }] }, ids)).toEqual([1]);
  });

  it.each([
    ['a list that is not one', { batchItemFailures: 'm1' }],
    ['an identifier not of the batch', { batchItemFailures: [{ itemIdentifier: 'm9' }] }],
  ])('fails the whole batch for %s', (_, response) => {
    expect(failedIndexes(response, ids)).toEqual([0, 1, 2]);
  });
});

describe('rateSeconds (the schedules the local runtime runs)', () => {
  it.each([
    ['rate(1 minute)', 60],
    ['rate(5 minutes)', 300],
    ['rate(2 hours)', 7200],
    // sweepIntervalMinutes: 1440 synthesizes to this: it was skipped, and the sweeper never ran.
    ['rate(1 day)', 86_400],
    ['rate(3 days)', 259_200],
  ])('reads %s as %i seconds', (expression, seconds) => {
    expect(rateSeconds(expression)).toBe(seconds);
  });

  it('refuses a schedule it would not run, rather than skip it in silence', () => {
    expect(() => rateSeconds('cron(0 12 * * ? *)')).toThrow(
      'the local runtime runs rate(N minutes|hours|days) schedules only (got cron(0 12 * * ? *))',
    );
  });
});
