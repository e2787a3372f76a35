import type { ChainRecord, Cursor, PageRecord } from '../core/index.ts';
import type { Change } from './table.ts';

/**
 * Every change the chain store makes to a chain item that takes more than a line, as data: its
 * update expression, its values and its condition.
 */

/** What a page's deletion counted, added to its chain when the page closes. */
export interface PageCounts {
  objects: number;
  bytes: number;
  failed: number;
}

/** A chain's pace after a SlowDown (lib/pipeline/pace). */
export interface Pacing {
  pace: number;
  ceiling?: number | undefined;
  nextAt: number;
  cutAt: number;
}

/**
 * What a paced chain's completion records (lib/pipeline/pace): the rise its pace takes, and
 * when the page's delete was sent, which the next page's delete waits a slot after.
 */
export interface PaceStep {
  rise: number;
  sentAt: number;
}

/** A chain no Stalled verdict has stopped: it may list, and split, further. */
export const notStopped = 'attribute_not_exists(stopped)';

/** A chain whose listing has reached its end and that has not settled yet. */
export const chainHasEnded = { expression: 'ended = :true AND settled = :false' };

/** What a completion records of its step: only a chain that has a pace keeps one. */
const stepOf = (
  chain: ChainRecord,
  step: PaceStep | undefined,
): { rise?: number; sentAt?: number } =>
  chain.pace === undefined || step === undefined
    ? {}
    : { sentAt: step.sentAt, ...(step.rise > 0 ? { rise: step.rise } : {}) };

/** True when closing `page` leaves the chain, as read, ended with no page open. */
export const closesChain = (chain: ChainRecord, page: PageRecord) =>
  chain.ended &&
  !chain.settled &&
  Object.keys(chain.open ?? {}).join() === String(page.page) &&
  chain.pagesDone !== undefined;

export const chainChanges = {
  /** Page `pageNumber` listed (with no page: the chain listed empty), once. */
  listing: (
    pageNumber: number,
    page: PageRecord | undefined,
    next: Cursor | undefined,
    now: number,
  ): Change => {
    const sets = ['lastPage = :page', 'ended = :ended'];
    if (next) sets.push('#cursor = :cursor');
    if (page) sets.push('#open.#page = :record');
    if (pageNumber === 0) sets.push('startedAt = :now');
    return {
      update: `SET ${sets.join(', ')}`,
      names: {
        ...(next ? { '#cursor': 'cursor' } : {}),
        ...(page ? { '#open': 'open', '#page': String(pageNumber) } : {}),
      },
      values: {
        ':page': pageNumber,
        ':ended': next === undefined,
        ...(next ? { ':cursor': next } : {}),
        ...(page ? { ':record': { ...page, listedAt: now } } : {}),
        ...(pageNumber === 0 ? { ':now': now } : {}),
      },
      condition: {
        expression: `lastPage = :previous AND ended = :false AND ${notStopped}`,
        values: { ':previous': pageNumber - 1, ':false': false },
      },
    };
  },

  /**
   * An open page counted and closed, once. `settles`: it is the last page of a chain that has
   * ended (`closesChain`), so the chain settles too, conditional on no other page having
   * closed since it was read (`pagesDone`): the counts it read are the chain's.
   */
  completion: (
    chain: ChainRecord,
    page: PageRecord,
    counts: PageCounts,
    step: PaceStep | undefined,
    settles: boolean,
  ): Change => {
    const { rise, sentAt } = stepOf(chain, step);
    const sets = [
      ...(settles ? ['settled = :true'] : []),
      ...(sentAt !== undefined ? ['sentAt = :sent'] : []),
    ];
    return {
      update: [
        sets.length > 0 ? `SET ${sets.join(', ')}` : '',
        'REMOVE #open.#page',
        'ADD objectsDeleted :objects, bytesDeleted :bytes, failedObjects :failed, pagesDone :one',
      ]
        .join(' ')
        .trim()
        .concat(rise !== undefined ? ', pace :rise' : ''),
      names: { '#open': 'open', '#page': String(page.page) },
      values: {
        ':objects': counts.objects,
        ':bytes': counts.bytes,
        ':failed': counts.failed,
        ':one': 1,
        ...(rise !== undefined ? { ':rise': rise } : {}),
        ...(sentAt !== undefined ? { ':sent': sentAt } : {}),
        ...(settles ? { ':true': true, ':false': false, ':done': chain.pagesDone } : {}),
      },
      condition: {
        expression: settles
          ? `attribute_exists(#open.#page) AND size(#open) = :one AND ${chainHasEnded.expression} AND pagesDone = :done`
          : 'attribute_exists(#open.#page)',
      },
    };
  },

  /** Stopped for good by a Stalled verdict, with every page it opened before (as it now is). */
  stop: {
    update: 'SET stopped = :true',
    values: { ':true': true },
    condition: { expression: 'attribute_exists(pk)' },
  } satisfies Change,

  /** A new pace, unless another refusal cut it since `seenCutAt`. */
  slowDown: (pacing: Pacing, seenCutAt: number | undefined): Change => {
    const ceiling = pacing.ceiling !== undefined;
    const sets = ['pace = :pace', 'nextAt = :nextAt', 'cutAt = :cutAt'];
    if (ceiling) sets.push('ceiling = :ceiling');
    return {
      update: `SET ${sets.join(', ')}`,
      values: {
        ':pace': pacing.pace,
        ':nextAt': Math.ceil(pacing.nextAt),
        ':cutAt': pacing.cutAt,
        ...(ceiling ? { ':ceiling': pacing.ceiling } : {}),
      },
      condition:
        seenCutAt === undefined
          ? { expression: 'attribute_exists(pk) AND attribute_not_exists(cutAt)' }
          : { expression: 'cutAt = :seen', values: { ':seen': seenCutAt } },
    };
  },
};

/** The chain as a completion that settles it leaves it. */
export function completed(
  chain: ChainRecord,
  page: PageRecord,
  counts: PageCounts,
  step: PaceStep | undefined,
): ChainRecord {
  const { [String(page.page)]: _closed, ...open } = chain.open;
  const { rise, sentAt } = stepOf(chain, step);
  return {
    ...chain,
    open,
    settled: true,
    objectsDeleted: (chain.objectsDeleted ?? 0) + counts.objects,
    bytesDeleted: (chain.bytesDeleted ?? 0) + counts.bytes,
    failedObjects: (chain.failedObjects ?? 0) + counts.failed,
    pagesDone: chain.pagesDone + 1,
    ...(rise !== undefined ? { pace: (chain.pace ?? 0) + rise } : {}),
    ...(sentAt !== undefined ? { sentAt } : {}),
  };
}
