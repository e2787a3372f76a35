import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../lib/core/index.ts';

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
