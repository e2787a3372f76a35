import { describe, expect, it } from 'vitest';
import {
  compareKeys,
  cutToRange,
  isInRange,
  type ListedObject,
  startOf,
} from '../../../lib/core/index.ts';

const entry = (key: string): ListedObject => ({ key, size: 1 });

describe('compareKeys', () => {
  it('orders keys by their UTF-8 bytes, as S3 lists them, not by UTF-16 code units', () => {
    // U+FF5E (3 UTF-8 bytes, EF BD 9E) sorts before U+1F600 (F0 9F 98 80) in S3;
    // as UTF-16 the surrogate D83D comes first.
    const [fullwidth, emoji] = ['a/\uFF5E', 'a/\u{1F600}'];
    expect(fullwidth > emoji).toBe(true);
    expect(compareKeys(fullwidth, emoji)).toBeLessThan(0);
  });

  it('agrees with plain comparison for ASCII keys, and is 0 only for the same key', () => {
    expect(compareKeys('a/b', 'a/c')).toBeLessThan(0);
    expect(compareKeys('a/c', 'a/b')).toBeGreaterThan(0);
    expect(compareKeys('a/b', 'a/b')).toBe(0);
  });
});

describe('isInRange', () => {
  const range = { from: 'loc/dt=2/', below: 'loc/dt=4/' };

  it('holds keys from its lower bound up to, not including, its upper bound', () => {
    expect(isInRange('loc/dt=2/', range)).toBe(true);
    expect(isInRange('loc/dt=3/x', range)).toBe(true);
    expect(isInRange('loc/dt=4/', range)).toBe(false);
    expect(isInRange('loc/dt=1/x', range)).toBe(false);
    // Between a proper prefix of the bound and the bound itself: before the range.
    expect(isInRange('loc/dt=2-x', range)).toBe(false);
  });

  it('is open where a bound is absent', () => {
    expect(isInRange('a', { below: 'b' })).toBe(true);
    expect(isInRange('z', { from: 'b' })).toBe(true);
    expect(isInRange('anything', {})).toBe(true);
  });
});

describe('startOf', () => {
  it('starts after a key that sorts just before the lower bound, so the bound itself is listed', () => {
    const start = startOf({ from: 'loc/dt=2/' });
    expect(start).toEqual({ key: 'loc/dt=2' });
    expect(compareKeys(start?.key ?? '', 'loc/dt=2/')).toBeLessThan(0);
  });

  it('starts at the beginning of the prefix for a range open below, or no range', () => {
    expect(startOf({ below: 'x' })).toBeUndefined();
    expect(startOf(undefined)).toBeUndefined();
  });
});

describe('cutToRange', () => {
  const range = { from: 'loc/b/', below: 'loc/d/' };

  it('keeps the entries in range and the next position while the range goes on', () => {
    const page = {
      objects: ['loc/a-x', 'loc/b/1', 'loc/c/1'].map(entry),
      next: { key: 'loc/c/1' },
    };
    expect(cutToRange(page, range)).toEqual({
      objects: [entry('loc/b/1'), entry('loc/c/1')],
      next: { key: 'loc/c/1' },
    });
  });

  it('ends the range at the first entry past its upper bound, even when the listing goes on', () => {
    const page = { objects: ['loc/c/9', 'loc/d/', 'loc/d/1'].map(entry), next: { key: 'loc/d/1' } };
    expect(cutToRange(page, range)).toEqual({ objects: [entry('loc/c/9')] });
  });

  it('answers an empty page, going on, when a whole page lies before the lower bound', () => {
    const page = { objects: ['loc/b-1', 'loc/b-2'].map(entry), next: { key: 'loc/b-2' } };
    expect(cutToRange(page, range)).toEqual({ objects: [], next: { key: 'loc/b-2' } });
  });

  it('leaves a listing of a chain without a range as it is', () => {
    const page = { objects: [entry('loc/z')], next: { key: 'loc/z' } };
    expect(cutToRange(page, undefined)).toBe(page);
  });
});
