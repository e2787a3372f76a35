import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  daysBefore,
  isDay,
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
    // The shape of a day, but not a day: in no day's partition, so before no cutoff.
    ['dt=2025-13-45/x.json', false],
    ['dt=0000-00-00/y.json', false],
    ['dt=2025-02-30/w.json', false],
    ['dt=2025-02-29/x.json', false],
    ['dt=2024-02-29/leap.json', true],
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

  it("never reaches a neighbour whose name extends the location's (logs/10/ beside logs/1/)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 1 }).filter((next) => next !== '/'),
        fc.string(),
        fc.boolean(),
        (next, rest, withCutoff) => {
          const key = `${location.slice(0, -1)}${next}/dt=2026-01-01/${rest}`;
          expect(isInScope(key, withCutoff ? partitions : { location })).toBe(false);
        },
      ),
    );
  });

  it('finds no day in a partition whose name is not a real day', () => {
    for (const name of ['2025-13-45', '0000-00-00', '2025-02-30', '2026-04-31', '2026-00-10']) {
      expect(partitionDayOf(`${location}dt=${name}/x.json`, location)).toBeUndefined();
    }
    expect(partitionDayOf(`${location}dt=2024-02-29/x.json`, location)).toBe('2024-02-29');
  });

  it('takes as a partition day exactly what a cutoff takes as a day', () => {
    const digits = (length: number) =>
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: length, maxLength: length });
    const shaped = fc
      .tuple(digits(4), digits(2), digits(2))
      .map((parts) => parts.map((part) => part.join('')).join('-'));
    const farFuture = new Date('9999-12-31T00:00:00.000Z');
    fc.assert(
      fc.property(shaped, (name) => {
        let cutoff: boolean;
        try {
          cutoff = parseCutoff(name, farFuture) === name;
        } catch {
          cutoff = false;
        }
        expect(isDay(name)).toBe(cutoff);
        expect(partitionDayOf(`${location}dt=${name}/x.json`, location)).toBe(
          cutoff ? name : undefined,
        );
      }),
      { numRuns: 2000 },
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
