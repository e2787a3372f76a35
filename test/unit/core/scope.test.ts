import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  daysBefore,
  isInScope,
  parseCutoff,
  partitionDayOf,
} from '../../../lib/core/index.ts';

const location = 'streams/acme/logs/1/';
const partitions = { location, before: '2026-01-03' };

describe('isInScope', () => {
  it.each([
    ['dt=2026-01-02/a.json', true],
    ['dt=2026-01-01/deep/er/b.json', true],
    ['dt=2026-01-03/a.json', false],
    ['dt=2026-01-04/a.json', false],
    ['manifest.json', false],
    ['schema/dt=2026-01-01/x.json', false],
    ['dt=bogus/x.json', false],
    ['dt=2026-01-02', false],
    ['dt=2026-1-2/x.json', false],
  ])('a partition deletion before 2026-01-03 may touch %s: %s', (key, expected) => {
    expect(isInScope(`${location}${key}`, partitions)).toBe(expected);
  });

  it('never reaches outside the location, whatever the cutoff', () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (rest, withCutoff) => {
        const key = `streams/acme/logs2/${rest}`;
        expect(isInScope(key, withCutoff ? partitions : { location })).toBe(false);
      }),
    );
  });

  it('lets a stream deletion take everything under its location', () => {
    expect(isInScope(`${location}anything/at/all`, { location })).toBe(true);
    expect(partitionDayOf(`${location}dt=2026-01-02/x`, location)).toBe('2026-01-02');
  });
});

describe('parseCutoff', () => {
  const today = new Date('2026-12-01T12:00:00.000Z');

  it.each(['2026-12-01', '2026-11-30', '1999-01-01'])('takes %s', (day) => {
    expect(parseCutoff(day, today)).toBe(day);
  });

  it.each([undefined, '', '2026-12-02', '2026-02-30', '20261201', '2026-12-01T00:00:00Z'])(
    'refuses %j with InvalidCutoff',
    (value) => {
      expect(() => parseCutoff(value, today)).toThrow(BadRequestError);
      try {
        parseCutoff(value, today);
      } catch (error) {
        expect((error as BadRequestError).code).toBe('InvalidCutoff');
      }
    },
  );
});

describe('daysBefore', () => {
  it('counts whole UTC days back from the day of the time', () => {
    expect(daysBefore(new Date('2026-03-01T23:59:59.000Z'), 1)).toBe('2026-02-28');
    expect(daysBefore(new Date('2026-01-01T00:00:00.000Z'), 30)).toBe('2025-12-02');
  });
});
