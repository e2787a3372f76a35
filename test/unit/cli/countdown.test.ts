import { describe, expect, it } from 'vitest';
import { formatCountdown, isDue, startsIn } from '../../../lib/cli/countdown.ts';

describe.each<[number, string]>([
  [0, '0s'],
  [999, '0s'],
  [45_000, '45s'],
  [845_000, '14m 05s'],
  [3_600_000, '1h 00m'],
  [86_399_900, '23h 59m'],
  [86_400_000, '1d 00h'],
  [7 * 86_400_000 - 1, '6d 23h'],
  [-5_000, '0s'],
])('formatCountdown(%i)', (ms, text) => {
  it(`is ${text}, rounded down`, () => expect(formatCountdown(ms)).toBe(text));
});

describe('the start of a SCHEDULED deletion', () => {
  const executeAfter = '2026-03-02T11:00:00.000Z';
  const at = Date.parse(executeAfter);

  it('is in some time while a second or more is left', () => {
    expect(startsIn(executeAfter, at - 86_399_750)).toBe('in 23h 59m');
    expect(startsIn(executeAfter, at - 1_000)).toBe('in 1s');
    expect(isDue(executeAfter, at - 1_000)).toBe(false);
  });

  it('is due any moment now after that, and once past', () => {
    expect(startsIn(executeAfter, at - 999)).toBe('any moment now');
    expect(startsIn(executeAfter, at + 60_000)).toBe('any moment now');
    expect(isDue(executeAfter, at)).toBe(true);
  });
});
