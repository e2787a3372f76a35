import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventsOf, MAX_EVENTS_NESTING, nestingOf } from '../../../lib/api/request.ts';

/** How deeply a JSON value nests arrays and objects, by recursion (the reference). */
const depthOf = (value: unknown): number =>
  value !== null && typeof value === 'object'
    ? 1 + Math.max(0, ...Object.values(value).map(depthOf))
    : 0;

const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
};

describe('nestingOf', () => {
  it('reads the depth of any JSON text, brackets and escapes inside strings included', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(nestingOf(Buffer.from(JSON.stringify(value)))).toBe(depthOf(value));
      }),
    );
  });

  it('skips brackets in strings, escaped quotes and backslashes included', () => {
    expect(nestingOf(Buffer.from('["[[\\"[", "\\\\", {"a": "}{"}]'))).toBe(2);
  });
});

describe('eventsOf', () => {
  it(`accepts events nested ${MAX_EVENTS_NESTING} levels deep, the batch's array included`, () => {
    expect(eventsOf(Buffer.from(nested(MAX_EVENTS_NESTING)))).toHaveLength(1);
  });

  it('refuses deeper events with 400 NestingTooDeep, however deep', () => {
    for (const levels of [MAX_EVENTS_NESTING + 1, 10_000, 200_000]) {
      expect(
        codeOf(() => eventsOf(Buffer.from(nested(levels)))),
        `${levels}`,
      ).toBe('NestingTooDeep');
    }
    const objects = `[${'{"a":'.repeat(MAX_EVENTS_NESTING)}1${'}'.repeat(MAX_EVENTS_NESTING)}]`;
    expect(codeOf(() => eventsOf(Buffer.from(objects)))).toBe('NestingTooDeep');
  });

  it('stores what it accepts: the events it returns can be written out again', () => {
    expect(() => JSON.stringify(eventsOf(Buffer.from(nested(MAX_EVENTS_NESTING))))).not.toThrow();
  });
});
