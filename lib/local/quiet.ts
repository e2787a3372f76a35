/** Which of the local console's lines `npm start` prints, from LETHE_QUIET. */
export interface ConsoleLines {
  /** One line per request answered. */
  readonly requests: boolean;
  /** One line per deletion state change. */
  readonly states: boolean;
}

/**
 * LETHE_QUIET: unset (or empty, `0`, `false`, `no`) prints every line; `1` (`true`, `yes`) none;
 * `requests` drops the request lines and keeps the state changes, for a seed of thousands of
 * objects that would bury them. Anything else is refused, so a typo is not taken for a choice.
 */
export function consoleLinesOf(value: string | undefined): ConsoleLines {
  const setting = (value ?? '').trim().toLowerCase();
  if (['', '0', 'false', 'no'].includes(setting)) return { requests: true, states: true };
  if (['1', 'true', 'yes'].includes(setting)) return { requests: false, states: false };
  if (setting === 'requests') return { requests: false, states: true };
  throw new RangeError(
    `LETHE_QUIET must be 1 (no lines), requests (state changes only) or unset (got ${value})`,
  );
}
