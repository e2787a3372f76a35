/**
 * RFC 8785 (JSON Canonicalization Scheme): the one byte sequence a JSON value signs as.
 * Object keys sorted by their UTF-16 code units, no whitespace, numbers as ECMAScript
 * serializes them, strings escaped as JSON.stringify escapes them (which RFC 8785 adopts).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('RFC 8785 has no form for NaN or Infinity');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      // Default sort compares UTF-16 code units, as RFC 8785 requires.
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  throw new TypeError(`cannot canonicalize a ${typeof value}`);
}
