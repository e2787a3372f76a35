import {
  DELETION_STATES,
  type DeletionState,
  isDay,
  isDeletionId,
  NAME_PATTERN,
} from '../core/index.ts';
import { formatCount } from './progress.ts';
import { didYouMean } from './suggest.ts';

/** The command line is wrong: exit 2 with the message and a pointer to `--help`. */
/** How a file argument is named in a message: `-` is stdin. */
export const inputName = (file: string) => (file === '-' ? 'stdin' : file);

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** NAME_PATTERN in words. */
export const NAME_RULE =
  'lowercase letters, digits, - and _, 1 to 63 characters, starting with a letter or digit';
/** The longest tenant or stream name NAME_PATTERN allows. */
export const MAX_NAME_LENGTH = 63;

/** A tenant or stream name, or a usage error that says in words what a name may be. */
export function name(kind: 'tenant' | 'stream', value: string): string {
  if (NAME_PATTERN.test(value)) return value;
  if (value.length > MAX_NAME_LENGTH) {
    throw new UsageError(
      `${kind} name is too long: ${value.length} characters, at most ${MAX_NAME_LENGTH}`,
    );
  }
  throw new UsageError(
    `${kind} name must be ${NAME_RULE} (got ${JSON.stringify(value)}${why(value)})`,
  );
}

/** What is wrong with a name of the right length. */
function why(value: string): string {
  if (value === '') return ', an empty name';
  const first = value[0] ?? '';
  if (first === '-' || first === '_') return `: it starts with ${first}`;
  const bad = [...value].find((char) => !/[a-z0-9_-]/.test(char));
  return bad === undefined ? '' : `: ${JSON.stringify(bad)} is not allowed`;
}

/** TENANT/STREAM */
export function streamRef(ref: string): { tenant: string; stream: string } {
  const parts = ref.split('/');
  if (parts.length !== 2) {
    throw new UsageError(`expected TENANT/STREAM, got ${JSON.stringify(ref)}`);
  }
  return { tenant: name('tenant', parts[0] ?? ''), stream: name('stream', parts[1] ?? '') };
}

/** A deletion id: a lowercase UUID, as the API answers it. */
export function deletionId(value: string): string {
  if (isDeletionId(value)) return value;
  throw new UsageError(`DELETION_ID must be a lowercase UUID (got ${JSON.stringify(value)})`);
}

/** A plan id: a lowercase UUID too, as `lethe delete --dry-run` and the API answer it. */
export function planId(value: string): string {
  if (isDeletionId(value)) return value;
  throw new UsageError(`PLAN_ID must be a lowercase UUID (got ${JSON.stringify(value)})`);
}

/** An integer option from `min` to `max`. */
export function integer(option: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) {
    throw new UsageError(
      `${option} must be an integer from ${formatCount(min)} to ${formatCount(max)} (got ${value})`,
    );
  }
  return number;
}

/** `--interval`: seconds in decimal, fractions allowed (`0.5`, `.5`, `2`; not `0x10` or `1e1`). */
export function seconds(value: string): number {
  const number = Number(value);
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value) || number < 0.1 || number > 3600) {
    throw new UsageError(`--interval must be a number of seconds from 0.1 to 3600 (got ${value})`);
  }
  return number;
}

/** The longest grace window the API accepts: 30 days. */
export const MAX_GRACE_SECONDS = 30 * 86_400;

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/**
 * `--grace`: `90s`, `15m`, `24h`, `7d`, several of them (`1h30m`), or plain seconds; at most
 * 30 days.
 */
export function graceSeconds(value: string): number {
  const text = value.trim().toLowerCase();
  let total: number;
  if (/^\d+$/.test(text)) {
    total = Number(text);
  } else if (/^(\d+[smhd])+$/.test(text)) {
    total = [...text.matchAll(/(\d+)([smhd])/g)].reduce(
      (sum, [, amount, unit]) => sum + Number(amount) * (UNIT_SECONDS[unit ?? ''] ?? 0),
      0,
    );
  } else {
    throw new UsageError(
      `--grace must be a duration such as 90s, 15m, 24h or 7d, or a number of seconds (got ${JSON.stringify(value)})`,
    );
  }
  if (total > MAX_GRACE_SECONDS) {
    throw new UsageError(
      `--grace must be at most 30 days (${formatCount(MAX_GRACE_SECONDS)} seconds); ${value} is ${formatCount(total)} seconds`,
    );
  }
  return total;
}

/** `--state`, in any case, one of the deletion states. */
export function deletionState(value: string): DeletionState {
  const state = DELETION_STATES.find((known) => known === value.toUpperCase());
  if (state) return state;
  throw new UsageError(
    `--state must be one of ${DELETION_STATES.join(', ')} (got ${value})${didYouMean(value.toUpperCase(), DELETION_STATES)}`,
  );
}

/** `--before`: a real day, YYYY-MM-DD. Whether it lies after today is the API's to say. */
export function day(option: string, value: string): string {
  if (isDay(value)) return value;
  throw new UsageError(`${option} must be a day, YYYY-MM-DD (got ${JSON.stringify(value)})`);
}

/** The longest retention the API takes: a hundred years of days. */
export const MAX_RETENTION_DAYS = 36_500;

/** DAYS of `streams retention`: a whole number of days, 1 to 36,500. */
export function retentionDays(value: string): number {
  const days = Number(value);
  if (/^\d+$/.test(value) && days >= 1 && days <= MAX_RETENTION_DAYS) return days;
  throw new UsageError(
    `DAYS must be a whole number of days from 1 to ${formatCount(MAX_RETENTION_DAYS)} (got ${JSON.stringify(value)})`,
  );
}
