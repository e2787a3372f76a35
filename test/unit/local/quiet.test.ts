import { describe, expect, it } from 'vitest';
import { consoleLinesOf } from '../../../lib/local/quiet.ts';

describe('consoleLinesOf (LETHE_QUIET)', () => {
  it.each([undefined, '', '0', 'false', 'no'])('%s prints every line', (value) => {
    expect(consoleLinesOf(value)).toEqual({ requests: true, states: true });
  });

  it.each(['1', 'true', 'YES'])('%s prints none', (value) => {
    expect(consoleLinesOf(value)).toEqual({ requests: false, states: false });
  });

  it('requests drops the request lines and keeps the state changes', () => {
    expect(consoleLinesOf('requests')).toEqual({ requests: false, states: true });
  });

  it('refuses anything else, naming the setting', () => {
    expect(() => consoleLinesOf('request')).toThrow(/^LETHE_QUIET must be .*\(got request\)$/);
  });
});
