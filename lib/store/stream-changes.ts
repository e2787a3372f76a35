import { type DeletionRecord, STREAM_TRANSITIONS, type StreamRecord } from '../core/index.ts';
import {
  all,
  atGeneration,
  type Condition,
  equals,
  noIngestInFlight,
  streamMay,
} from './conditions.ts';
import { RETENTION_POLICIES } from './layout.ts';
import type { Change } from './table.ts';

// StreamStore's tombstone, retention and partition writes, as data: the tombstone, setting or
// removing a policy, claiming a day's run, and claiming the stream for a partition deletion.

/**
 * An admitted ingest ends: its id leaves the set, once however often it is sent. A write that
 * failed (`failedAt`: when that was seen) may still be stored: S3 can finish a request whose
 * client gave up on it (a timeout, the deadline's abort, a lost answer). So its id gives way to
 * `abandonedIngestAt` (its admission), one attribute however many fail, and a deletion waits
 * for it as for one in flight, the grace after the last admission.
 */
export function ingestEndChange(
  admitted: Pick<StreamRecord, 'generation' | 'lastIngestAt'> & { ingestId: string },
  failedAt?: Date,
): Change {
  const ended = { ':id': new Set([admitted.ingestId]) };
  const condition = atGeneration(admitted.generation);
  if (!failedAt) return { update: 'DELETE ingestsInFlight :id', values: ended, condition };
  return {
    update: 'DELETE ingestsInFlight :id SET abandonedIngestAt = :at',
    values: { ...ended, ':at': admitted.lastIngestAt ?? failedAt.toISOString() },
    condition,
  };
}

/**
 * The tombstone: ACTIVE at the generation read -> DELETING, with when its deletion may start.
 * A deletion that says no ingest was in flight (`ingestsSettled`) holds only if none is as the
 * tombstone is written. The partition deletion the stream holds is the one read (it had ended):
 * two deletions listing the same keys at once would both count them.
 */
export function tombstoneChange(current: StreamRecord, deletion: DeletionRecord): Change {
  const may = all(
    streamMay('tombstone'),
    atGeneration(current.generation),
    partitionsHeldBy(current.partitionDeletionId),
  );
  return {
    update: 'SET #state = :to, deletionId = :id, executeAfter = :executeAfter, updatedAt = :now',
    names: { '#state': 'state' },
    values: {
      ':to': STREAM_TRANSITIONS.tombstone.to,
      ':id': deletion.deletionId,
      ':executeAfter': deletion.executeAfter,
      ':now': deletion.requestedAt,
    },
    condition: deletion.ingestsSettled ? all(may, noIngestInFlight) : may,
  };
}

/**
 * Setting a stream's retention policy (`days`), or removing it: a stream with one sits in the
 * sweep index's RETENTION partition. A new number of days frees the day's run, so the next sweep
 * applies it (the day's run was the old policy's); the same number again is not a change (its
 * condition refuses it), so the day is not run twice.
 */
export function retentionChange(
  tenant: string,
  stream: string,
  days: number | undefined,
  now: string,
): Change {
  const condition = streamMay('plan');
  if (days === undefined) {
    return {
      update: 'SET updatedAt = :now REMOVE retentionDays, retentionRunOn, sweepPk, sweepSk',
      values: { ':now': now },
      condition,
    };
  }
  return {
    update:
      'SET retentionDays = :days, sweepPk = :retention, sweepSk = :name, updatedAt = :now REMOVE retentionRunOn',
    values: {
      ':days': days,
      ':retention': RETENTION_POLICIES,
      ':name': `${tenant}#${stream}`,
      ':now': now,
    },
    condition: all(condition, {
      expression: 'attribute_not_exists(retentionDays) OR retentionDays <> :days',
    }),
  };
}

/**
 * Today's run of an ACTIVE stream's policy of `days` days, claimed once (at most one a day) and
 * only while the policy is still `days`, the number the run's cutoff is computed from: a policy
 * removed or changed since it was read is not applied.
 */
export function retentionRunChange(stream: StreamRecord, days: number, today: string): Change {
  return {
    update: 'SET retentionRunOn = :today',
    values: { ':today': today },
    condition: all(
      streamMay('plan'),
      atGeneration(stream.generation),
      equals('retentionDays', days),
      { expression: 'attribute_not_exists(retentionRunOn) OR retentionRunOn < :today' },
    ),
  };
}

/** A day's retention run: the policy's number of days its cutoff came from, and the day. */
export interface RetentionRun {
  days: number;
  today: string;
}

/**
 * The stream's part of a partition deletion's request: it stays ACTIVE at its generation and
 * holds the deletion's id, one at a time; a holder that ended is replaced. A retention run's
 * request claims the day's run in the same write, so a run that dies never leaves the day
 * claimed with nothing requested.
 */
export function partitionClaimChange(
  current: StreamRecord,
  deletion: DeletionRecord,
  run?: RetentionRun,
): Change {
  const claim = run && retentionRunChange(current, run.days, run.today);
  return {
    update: `SET partitionDeletionId = :id, updatedAt = :now${claim ? ', retentionRunOn = :today' : ''}`,
    values: { ':id': deletion.deletionId, ':now': deletion.requestedAt, ...claim?.values },
    condition: all(
      partitionsHeldBy(current.partitionDeletionId),
      // A retention run's: once a day, only while the policy is still the one its cutoff came
      // from (both in the claim's condition, ACTIVE at the generation too).
      claim?.condition ?? all(streamMay('plan'), atGeneration(current.generation)),
    ),
  };
}

/** The stream holds this partition deletion (one that had ended when read), or none. */
const partitionsHeldBy = (deletionId: string | undefined): Condition =>
  deletionId
    ? equals('partitionDeletionId', deletionId)
    : { expression: 'attribute_not_exists(partitionDeletionId)' };
