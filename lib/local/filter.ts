/**
 * Lambda event filtering (the EventBridge pattern subset event source mappings accept):
 * literal values, `prefix`, `anything-but` and `exists`, nested by field.
 */
export type Pattern = { [field: string]: Pattern | Matcher[] };
type Matcher =
  | string
  | number
  | boolean
  | null
  | { prefix: string }
  | { 'anything-but': unknown }
  | { exists: boolean };

export function matchesPattern(event: unknown, pattern: Pattern): boolean {
  if (event === null || typeof event !== 'object') return false;
  const record = event as Record<string, unknown>;
  return Object.entries(pattern).every(([field, rule]) => {
    const value = record[field];
    if (Array.isArray(rule)) return rule.some((matcher) => matches(value, matcher));
    return matchesPattern(value, rule);
  });
}

function matches(value: unknown, matcher: Matcher): boolean {
  if (Array.isArray(value)) return value.some((item) => matches(item, matcher));
  if (matcher === null || typeof matcher !== 'object') return value === matcher;
  if ('exists' in matcher) return matcher.exists === (value !== undefined);
  if (value === undefined) return false;
  if ('prefix' in matcher) return typeof value === 'string' && value.startsWith(matcher.prefix);
  if ('anything-but' in matcher) {
    const excluded = matcher['anything-but'];
    return !(Array.isArray(excluded) ? excluded : [excluded]).includes(value);
  }
  return false;
}

/** A record passes when there are no filters or any one of them matches. */
export const passesFilters = (event: unknown, patterns: string[]) =>
  patterns.length === 0 ||
  patterns.some((pattern) => matchesPattern(event, JSON.parse(pattern) as Pattern));
