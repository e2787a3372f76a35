import type { ListedObject } from './records.ts';

/** A position in a listing: after this key (and, in a versioned bucket, this version of it). */
export interface Cursor {
  key: string;
  versionId?: string;
  /**
   * A plain listing's continuation token, when S3 answered a truncated page with no keys: the
   * key cannot move then, and only the token goes on from where S3 stopped.
   */
  token?: string;
}

/**
 * A run of keys a chain lists: every key `k` of its prefix with `from <= k < below`, in S3's
 * listing order. An absent bound is open (the start, or the end, of the prefix).
 */
export interface KeyRange {
  from?: string;
  below?: string;
  /** No child prefix lies in the rest of the range (after its last listing): no more splits. */
  indivisible?: boolean;
}

/** A chain to register: its id, the prefix it lists, and the run of that prefix's keys. */
export interface ChainLayout {
  chainId: string;
  prefix: string;
  range?: KeyRange;
}

/**
 * S3's order of keys: by their UTF-8 bytes. JavaScript compares UTF-16 code units, which
 * disagrees for keys holding both a character above U+FFFF and one in U+E000..U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function isInRange(key: string, range: KeyRange): boolean {
  if (range.from !== undefined && compareKeys(key, range.from) < 0) return false;
  return range.below === undefined || compareKeys(key, range.below) < 0;
}

/**
 * Where a range's listing starts: after a key just before `from` (a proper prefix of it sorts
 * first; the keys between the two that are not in the range are filtered out).
 */
export const startOf = (range: KeyRange | undefined): Cursor | undefined =>
  range?.from ? { key: range.from.slice(0, -1) } : undefined;

/** One page of a listing cut to a range: its entries in range, and whether the range goes on. */
export function cutToRange(
  page: { objects: ListedObject[]; next?: Cursor },
  range: KeyRange | undefined,
): { objects: ListedObject[]; next?: Cursor } {
  if (!range) return page;
  const objects = page.objects.filter((object) => isInRange(object.key, range));
  // Past its upper bound the range is over, whatever else the prefix holds.
  const past =
    range.below !== undefined &&
    page.objects.some((object) => compareKeys(object.key, range.below as string) >= 0);
  return { objects, ...(page.next && !past ? { next: page.next } : {}) };
}
