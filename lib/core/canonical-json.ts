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

/**
 * The first member name that appears twice in one object of a JSON text (valid JSON, as
 * `JSON.parse` accepts it), if any. `JSON.parse` keeps the last of them, so what a reader of the
 * text sees first is not what would be checked: RFC 8785 takes only I-JSON, which has none.
 */
export function duplicateName(text: string): string | undefined {
  // One entry per open object (its names so far) or array (undefined).
  const open: Array<Set<string> | undefined> = [];
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (nameNext) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        const names = open.at(-1);
        if (names?.has(name)) return name;
        names?.add(name);
        nameNext = false;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      open.push(c === '{' ? new Set() : undefined);
      nameNext = c === '{';
    } else if (c === '}' || c === ']') {
      open.pop();
    } else if (c === ',') {
      nameNext = open.at(-1) !== undefined;
    }
  }
  return undefined;
}
