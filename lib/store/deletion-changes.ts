import {
  canDeletion,
  DELETION_TRANSITIONS,
  type DeletionRecord,
  type DeletionRef,
  type DeletionTransition,
  type FailureReason,
} from '../core/index.ts';
import { all, atRound, type Condition, deletionMay } from './conditions.ts';
import { keys, OPEN_DELETIONS, SCHEDULED_DELETIONS } from './layout.ts';
import type { Change } from './table.ts';

/**
 * Every change the deletion store makes to a deletion item, as data: its update expression,
 * its values and its condition. The state rules come from the lifecycle tables.
 */

/** A stale deletion's stalls as the sweeper counts them, and the pages its round had counted. */
export interface StallCount {
  stalls: number;
  pagesDone: number;
}

/** A round starting with `chainsTotal` chains (PENDING -> RUNNING). */
export interface RoundStart {
  chainsTotal: number;
  versioned: boolean;
}

/**
 * How long a call may hold a round's registration (`registering`): the longest that a function
 * that dispatches runs (the sweeper's timeout; the dispatcher's is shorter). Past it, the call
 * that took it has ended, and another may take it over.
 */
export const REGISTRATION_HOLD_SECONDS = 120;

/** Every chain of the round has settled, and nobody has claimed its verification yet. */
const roundIsUnverified: Condition = {
  expression:
    'chainsSettled >= chainsTotal AND (attribute_not_exists(verifiedRound) OR verifiedRound < :round)',
};

/**
 * No dispatcher has begun creating the round's chains one by one (`registering`): a round
 * begun in one transaction beside them would run two layouts, which may overlap.
 */
const notRegistering: Condition = {
  expression: 'attribute_not_exists(registeredRound) OR registeredRound <> :round',
};

/** No verification has recorded an upload to abort (`UploadStore.record`). */
const noUploadsRecorded: Condition = { expression: 'attribute_not_exists(uploadsRecorded)' };

/**
 * A state change: allowed from the states the lifecycle names for `step`, in the round the
 * deletion was read at; `:to` is the state it moves to.
 */
function transition(
  deletion: DeletionRef,
  step: DeletionTransition,
  update: string,
  values: Record<string, unknown>,
): Change & { condition: Condition } {
  return {
    update,
    names: { '#state': 'state' },
    values: { ...values, ':to': DELETION_TRANSITIONS[step].to },
    condition: all(deletionMay(step), atRound(deletion.round)),
  };
}

/** When a finished receipt expires (DynamoDB's TTL, epoch seconds). */
export const expiry = (now: Date, retentionDays: number) =>
  Math.floor(now.getTime() / 1000) + retentionDays * 86_400;

/**
 * What ending a deletion writes: its final totals, and when the receipt expires (never, without
 * `retentionDays`).
 */
function ending(deletion: DeletionRecord, now: Date, retentionDays: number | undefined) {
  const expires = retentionDays === undefined ? {} : { ':expires': expiry(now, retentionDays) };
  return {
    update: [
      `SET #state = :to, updatedAt = :now,${retentionDays === undefined ? '' : ' expiresAt = :expires,'}`,
      'objectsDeleted = :objects, bytesDeleted = :bytes, failedObjects = :failed,',
      'multipartUploadsAborted = :uploads',
    ].join(' '),
    values: {
      ':now': now.toISOString(),
      ...expires,
      ':objects': deletion.objectsDeleted,
      ':bytes': deletion.bytesDeleted,
      ':failed': deletion.failedObjects,
      ':uploads': deletion.multipartUploadsAborted ?? 0,
    },
  };
}

export const deletionChanges = {
  /**
   * The index keys of a new deletion: listed under its tenant; in the sweep index as open (by
   * last progress) or scheduled (by when it may start).
   */
  indexKeys: (deletion: DeletionRecord) => ({
    ...keys.listed(deletion),
    ...(deletion.state === 'SCHEDULED'
      ? { sweepPk: SCHEDULED_DELETIONS, sweepSk: deletion.executeAfter }
      : { sweepPk: OPEN_DELETIONS, sweepSk: deletion.updatedAt }),
  }),

  /** SCHEDULED -> PENDING: it may start (at `executeAfter`, or now when expedited). */
  begin: (deletion: DeletionRef, executeAfter: string, now: string) =>
    transition(
      deletion,
      'begin',
      'SET #state = :to, executeAfter = :executeAfter, updatedAt = :now, sweepPk = :open, sweepSk = :now',
      { ':executeAfter': executeAfter, ':now': now, ':open': OPEN_DELETIONS },
    ),

  /** SCHEDULED -> CANCELLED: it leaves the sweep index, its receipt expires in time. */
  cancel: (deletion: DeletionRef, now: Date, retentionDays: number) =>
    transition(
      deletion,
      'cancel',
      'SET #state = :to, cancelledAt = :now, updatedAt = :now, expiresAt = :expires REMOVE sweepPk, sweepSk',
      { ':now': now.toISOString(), ':expires': expiry(now, retentionDays) },
    ),

  /** With `token`: only by the call that holds the round's registration (`registering`). */
  start: (deletion: DeletionRef, now: string, round: RoundStart, token?: string) => {
    const start = transition(
      deletion,
      'start',
      [
        'SET #state = :to, chainsTotal = :total, chainsSettled = :zero,',
        'versioned = :versioned, updatedAt = :now, sweepSk = :now',
      ].join(' '),
      { ':total': round.chainsTotal, ':zero': 0, ':versioned': round.versioned, ':now': now },
    );
    if (token === undefined) return start;
    const held = { expression: 'registeredBy = :token', values: { ':token': token } };
    return { ...start, condition: all(start.condition, held) };
  },

  /** The start in the transaction that creates the round's chains (`ChainStore.begin`). */
  startWithChains: (deletion: DeletionRef, now: string, round: RoundStart) => {
    const start = deletionChanges.start(deletion, now, round);
    return { ...start, condition: all(start.condition, notRegistering) };
  },

  /**
   * The round's chains are about to be created one by one by the call holding `token`, and
   * none begins in one transaction: refused while another call holds it, unless it took it
   * `REGISTRATION_HOLD_SECONDS` ago or more (that call has ended).
   */
  registering: (deletion: DeletionRef, now: Date, token: string) => ({
    update:
      'SET registeredRound = :round, registeredBy = :token, registeredAt = :now, updatedAt = :now',
    values: {
      ':now': now.toISOString(),
      ':token': token,
      ':heldSince': new Date(now.getTime() - REGISTRATION_HOLD_SECONDS * 1000).toISOString(),
    },
    condition: all(deletionMay('start'), atRound(deletion.round), {
      expression:
        'attribute_not_exists(registeredBy) OR registeredRound <> :round OR registeredBy = :token OR registeredAt < :heldSince',
    }),
  }),

  nextRound: (deletion: DeletionRef, versioned: boolean, now: string) =>
    transition(
      deletion,
      'nextRound',
      [
        'SET #state = :to, round = round + :one, chainsTotal = :zero, chainsSettled = :zero,',
        'versioned = :versioned, updatedAt = :now, sweepSk = :now',
      ].join(' '),
      { ':one': 1, ':zero': 0, ':now': now, ':versioned': versioned },
    ),

  complete: (deletion: DeletionRecord, now: Date, retentionDays: number) => {
    const end = ending(deletion, now, retentionDays);
    const change = transition(
      deletion,
      'complete',
      `${end.update}, completedAt = :now, verifiedAt = :verifiedAt REMOVE sweepPk, sweepSk`,
      { ...end.values, ':verifiedAt': deletion.verifiedAt ?? now.toISOString() },
    );
    // Totals read with no upload recorded count none: they hold only while none is recorded (a
    // verification at once that aborted one completes it, counted).
    if (deletion.uploadsRecorded) return change;
    return { ...change, condition: all(change.condition, noUploadsRecorded) };
  },

  fail: (deletion: DeletionRecord, now: Date, retentionDays: number, reason?: FailureReason) => {
    // A stream's FAILED deletion holds the stream DELETING until it is retried: its receipt,
    // the handle of that retry, does not expire. A partition deletion's leaves the stream be.
    const end = ending(deletion, now, deletion.before ? retentionDays : undefined);
    const change = transition(
      deletion,
      'fail',
      `${end.update}${reason ? ', reason = :reason' : ''} REMOVE sweepPk, sweepSk`,
      { ...end.values, ...(reason ? { ':reason': reason } : {}) },
    );
    // Its totals are the chains' as read: none started (PENDING -> RUNNING) or added since.
    const unchanged = {
      expression: '#state = :seenState AND chainsTotal = :seenChains',
      values: { ':seenState': deletion.state, ':seenChains': deletion.chainsTotal },
    };
    return { ...change, condition: all(change.condition, unchanged) };
  },

  /**
   * A FAILED deletion as a new round (its stream still DELETING by it). It remembers the round
   * it left off at (`round` as the item held it: DynamoDB reads every operand of an update
   * before it applies any), so the retry's rounds are counted afresh.
   */
  retry: (now: string): Change => ({
    update: [
      'SET retriedAtRound = round, retriedAt = :now, #state = :to, round = round + :one,',
      'attempts = attempts + :one,',
      'failedObjects = :zero, chainsTotal = :zero, chainsSettled = :zero, updatedAt = :now,',
      'sweepPk = :open, sweepSk = :now REMOVE reason, expiresAt, stalls',
    ].join(' '),
    names: { '#state': 'state' },
    values: {
      ':to': DELETION_TRANSITIONS.retry.to,
      ':one': 1,
      ':zero': 0,
      ':now': now,
      ':open': OPEN_DELETIONS,
    },
    condition: deletionMay('retry'),
  }),

  /** A mark of progress, won only if the last one is older than `before`. */
  heartbeat: (ref: DeletionRef, before: Date, now: string): Change => ({
    update: 'SET updatedAt = :now, sweepSk = :now',
    values: { ':now': now, ':before': before.toISOString() },
    condition: all(deletionMay('heartbeat'), atRound(ref.round), {
      expression: 'sweepSk < :before',
    }),
  }),

  /** One more chain of the round has ended. */
  settled: (deletion: DeletionRef, now: string): Change => ({
    update: 'ADD chainsSettled :one SET updatedAt = :now, sweepSk = :now REMOVE stalls',
    values: { ':one': 1, ':now': now },
    condition: all(deletionMay('settle'), atRound(deletion.round)),
  }),

  /** A chain of the round handed part of its range to a new chain: one more to settle. */
  chainAdded: (deletion: DeletionRef, now: string): Change => ({
    update: 'ADD chainsTotal :one SET updatedAt = :now, sweepSk = :now REMOVE stalls',
    values: { ':one': 1, ':now': now },
    condition: all(deletionMay('settle'), atRound(deletion.round)),
  }),

  /** claimVerification's condition, on the deletion as read (the last settle reads it ready). */
  verifiable: (deletion: DeletionRecord | undefined, round: number) =>
    deletion !== undefined &&
    canDeletion('verify', deletion.state) &&
    deletion.round === round &&
    deletion.chainsSettled >= deletion.chainsTotal &&
    (deletion.verifiedRound === undefined || deletion.verifiedRound < round),

  claimVerification: (deletion: DeletionRef, now: string): Change => ({
    // atRound binds :round.
    update: 'SET verifiedRound = :round, updatedAt = :now, sweepSk = :now REMOVE stalls',
    values: { ':now': now },
    condition: all(deletionMay('verify'), atRound(deletion.round), roundIsUnverified),
  }),

  /**
   * One more stall (and, when it is resumed, attempt), won only if nothing moved since the
   * sweeper read the deletion: `count.stalls` as the sweeper counted it, with the pages the
   * round's chains had counted (the next claim tells progress by them). The Stalled verdict's
   * claim (`attempt` false) marks the round, so the verdict stands once given.
   */
  claimStale: (seen: DeletionRecord, now: string, attempt: boolean, count: StallCount): Change => ({
    update: [
      'SET stalls = :stalls, progressSeen = :pages, progressRound = :round,',
      'updatedAt = :now, sweepSk = :now,',
      attempt ? 'attempts = attempts + :one' : 'stalledRound = :round',
    ].join(' '),
    names: { '#state': 'state' },
    values: {
      ...(attempt ? { ':one': 1 } : {}),
      ':stalls': count.stalls,
      ':pages': count.pagesDone,
      ':now': now,
      ':seen': seen.state,
      ':updatedAt': seen.updatedAt,
    },
    condition: all(deletionMay('resume'), atRound(seen.round), {
      expression: '#state = :seen AND updatedAt = :updatedAt',
    }),
  }),
};
