/** The time left before a SCHEDULED deletion starts, as a countdown shows it. */

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400],
  ['h', 3_600],
  ['m', 60],
  ['s', 1],
];

/**
 * A duration as its two largest units, rounded down: `23h 59m`, `14m 05s`, `45s`, `6d 23h`. A
 * countdown never says more time is left than there is.
 */
export function formatCountdown(ms: number): string {
  let left = Math.max(0, Math.floor(ms / 1000));
  const shown: string[] = [];
  for (const [unit, size] of UNITS) {
    const amount = Math.floor(left / size);
    left -= amount * size;
    if (shown.length > 0) shown.push(`${String(amount).padStart(2, '0')}${unit}`);
    else if (amount > 0 || size === 1) shown.push(`${amount}${unit}`);
    if (shown.length === 2) break;
  }
  return shown.join(' ');
}

/** Less than a second to go: the deletion may start at the sweeper's next pass. */
export const isDue = (executeAfter: string, wallNow: number) =>
  Date.parse(executeAfter) - wallNow < 1000;

/** `in 23h 59m`, or `any moment now` once `executeAfter` has come. */
export function startsIn(executeAfter: string, wallNow: number): string {
  return isDue(executeAfter, wallNow)
    ? 'any moment now'
    : `in ${formatCountdown(Date.parse(executeAfter) - wallNow)}`;
}

/** The countdown of a SCHEDULED deletion, for a terminal line or a log line. */
export function renderCountdown(executeAfter: string, wallNow: number): string {
  return `SCHEDULED, starts ${startsIn(executeAfter, wallNow)} (at ${executeAfter})`;
}
