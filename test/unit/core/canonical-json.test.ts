import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, duplicateName } from '../../../lib/core/index.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units, recursively, with no whitespace', () => {
    // RFC 8785, section 3.2.3: the sorting example.
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };

    expect(canonicalJson(value)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('serializes numbers as ECMAScript does', () => {
    // RFC 8785, section 3.2.2.3 examples.
    const numbers = [Number('333333333.33333329'), 1e30, 4.5, 0.002, 1e-27, -0];

    expect(canonicalJson(numbers)).toBe('[333333333.3333333,1e+30,4.5,0.002,1e-27,0]');
  });

  it('gives the same bytes whatever order the keys were written in', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 'x'], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, 'x'] }, b: 1 }),
    );
  });

  it('escapes strings as RFC 8785 says (control characters as \\u, the rest as is)', () => {
    expect(canonicalJson({ s: '\u0001 "q" \\ \u2028 é' })).toBe(
      '{"s":"\\u0001 \\"q\\" \\\\ \u2028 é"}',
    );
  });

  it('refuses what JSON cannot say', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
  });
});

describe('duplicateName', () => {
  it.each<[string, string, string | undefined]>([
    ['none', '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}', undefined],
    ['at the top', '{"a":1,"b":2,"a":3}', 'a'],
    ['in a nested object', '{"x":{"n":1,"n":2}}', 'n'],
    ['in an object inside an array', '[1,{"k":"v","k":"w"}]', 'k'],
    ['written with an escape', '{"t":1,"\\u0074":2}', 't'],
    ['not fooled by names inside string values', '{"a":"\\",\\"a\\":","b":1}', undefined],
    ['with whitespace around', '{ "a" : 1 ,\n "a" : 2 }', 'a'],
    ['in an empty object', '{}', undefined],
  ])('finds %s', (_, text, found) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(duplicateName(text)).toBe(found);
  });

  it('finds none in what JSON.stringify writes, however nested', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(duplicateName(JSON.stringify(value))).toBeUndefined();
        expect(duplicateName(JSON.stringify(value, null, 2))).toBeUndefined();
      }),
    );
  });
});
