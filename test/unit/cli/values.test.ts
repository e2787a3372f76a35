import { describe, expect, it } from 'vitest';
import { MAX_GRACE_SECONDS, MAX_NAME_LENGTH, NAME_RULE } from '../../../lib/cli/values.ts';
import { NAME_PATTERN } from '../../../lib/core/index.ts';

/** The words of NAME_RULE hold for NAME_PATTERN, so the two cannot drift apart unseen. */
describe('the name rule in words', () => {
  it('says what NAME_PATTERN says', () => {
    expect(NAME_RULE).toBe(
      `lowercase letters, digits, - and _, 1 to ${MAX_NAME_LENGTH} characters, starting with a letter or digit`,
    );
  });

  it('has the length right', () => {
    expect(NAME_PATTERN.test('')).toBe(false);
    expect(NAME_PATTERN.test('a'.repeat(MAX_NAME_LENGTH))).toBe(true);
    expect(NAME_PATTERN.test('a'.repeat(MAX_NAME_LENGTH + 1))).toBe(false);
  });

  it('has the characters right', () => {
    expect(NAME_PATTERN.test('abcdefghijklmnopqrstuvwxyz0123456789-_')).toBe(true);
    for (const first of ['-', '_']) expect(NAME_PATTERN.test(`${first}a`)).toBe(false);
    for (const first of ['a', '0']) expect(NAME_PATTERN.test(`${first}-_`)).toBe(true);
    for (const other of ['A', '.', '/', ' ', 'é'])
      expect(NAME_PATTERN.test(`a${other}`)).toBe(false);
  });
});

describe('the longest grace window', () => {
  it('is the 30 days the API accepts', () => {
    expect(MAX_GRACE_SECONDS).toBe(2_592_000);
  });
});
