import { BadRequestError } from './errors.ts';
import { isInside } from './names.ts';

/**
 * What a deletion may touch. A stream deletion takes everything under its location; a
 * partition deletion (`before`) only the `dt=YYYY-MM-DD/` partitions of real days strictly
 * before its cutoff: never a partition on or after it, never one whose name is not a real day,
 * never a key outside `dt=` partitions.
 */
export interface Scope {
  /** The stream incarnation's location, ending in `/`. */
  location: string;
  /** The cutoff day (YYYY-MM-DD) of a partition deletion. */
  before?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const PARTITION = /^dt=(\d{4}-\d{2}-\d{2})\//;

/**
 * Whether `value` is a real day, YYYY-MM-DD (UTC): the shape, and a date that reads back the
 * same, so month 13, day 00 or 30 February are not days.
 */
export function isDay(value: string): boolean {
  if (!DAY.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

/** A deletion's scope: its location, and its cutoff when it deletes partitions. */
export const scopeOf = (deletion: { prefix: string; before?: string | undefined }): Scope => ({
  location: deletion.prefix,
  ...(deletion.before ? { before: deletion.before } : {}),
});

/**
 * The day of the `dt=` partition `key` lies in, directly under `location`; none when the
 * partition's name is not a real day (`dt=2025-13-45/` is in no day's partition).
 */
export function partitionDayOf(key: string, location: string): string | undefined {
  if (!isInside(key, location)) return undefined;
  const day = PARTITION.exec(key.slice(location.length))?.[1];
  return day !== undefined && isDay(day) ? day : undefined;
}

/** Whether a deletion of `scope` may delete `key` (or list it, for a chain's own prefix). */
export function isInScope(key: string, scope: Scope): boolean {
  if (key !== scope.location && !isInside(key, scope.location)) return false;
  if (scope.before === undefined) return true;
  const day = partitionDayOf(key, scope.location);
  return day !== undefined && day < scope.before;
}

/** The cutoff of `DELETE .../partitions?before=`: a real day, and not after `today` (UTC). */
export function parseCutoff(value: string | undefined, today: Date): string {
  const refuse = (why: string) => new BadRequestError('InvalidCutoff', why);
  if (value === undefined || !DAY.test(value)) {
    throw refuse(
      'before must be a day, YYYY-MM-DD (the partitions strictly before it are deleted)',
    );
  }
  if (!isDay(value)) throw refuse(`before must be a real day (got ${value})`);
  const day = dayOf(today);
  if (value > day) throw refuse(`before must not be after today, ${day} UTC (got ${value})`);
  return value;
}

/** The UTC day of a time, YYYY-MM-DD. */
export const dayOf = (time: Date) => time.toISOString().slice(0, 10);

/** The day `days` before `time`'s day (UTC). */
export function daysBefore(time: Date, days: number): string {
  return dayOf(new Date(Date.parse(`${dayOf(time)}T00:00:00.000Z`) - days * 86_400_000));
}
