import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, nearest } from '../../../lib/cli/suggest.ts';

describe.each<[string, string, number]>([
  ['limit', 'limit', 0],
  ['limt', 'limit', 1],
  ['lsit', 'list', 1],
  ['strems', 'streams', 1],
  ['', 'wait', 4],
  ['kitten', 'sitting', 3],
])('editDistance(%j, %j)', (a, b, distance) => {
  it(`is ${distance}, both ways`, () => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('the nearest candidate', () => {
  const options = ['--limit', '--state', '--stack', '--next-token', '--wait'];

  it('is the closest one within reach, dashes aside', () => {
    expect(nearest('--limt', options)).toBe('--limit');
    expect(nearest('--stat', options)).toBe('--state');
    expect(nearest('--nexttoken', options)).toBe('--next-token');
  });

  it('is none when every candidate is far', () => {
    expect(nearest('--verbose', options)).toBeUndefined();
    expect(nearest('ls', ['list'])).toBeUndefined();
  });

  it('is said as a question, or not at all', () => {
    expect(didYouMean('--wiat', options)).toBe(' (did you mean --wait?)');
    expect(didYouMean('--zzz', options)).toBe('');
  });
});
