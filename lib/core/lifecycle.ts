/**
 * The states of streams and deletions, and every transition between them. The stores derive
 * their condition expressions from these tables, so a rule is written once, here, and no
 * write names a state of its own.
 */

export const STREAM_STATES = ['ACTIVE', 'DELETING', 'DELETED'] as const;
export type StreamState = (typeof STREAM_STATES)[number];

export const DELETION_STATES = [
  'SCHEDULED',
  'PENDING',
  'RUNNING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
] as const;
export type DeletionState = (typeof DELETION_STATES)[number];

export interface Transition<S extends string> {
  /** States the item must be in; an empty list means the item must not exist yet. */
  readonly from: readonly S[];
  readonly to: S;
}

/** A write that keeps the state but is allowed only in these states. */
export interface Activity<S extends string> {
  readonly in: readonly S[];
}

export const STREAM_TRANSITIONS = {
  /** A name never used, or freed by a completed deletion, gets a new incarnation. */
  create: { from: ['DELETED'], to: 'ACTIVE' },
  /** The tombstone: written with the deletion record in one transaction. */
  tombstone: { from: ['ACTIVE'], to: 'DELETING' },
  /** The deletion completed: the name is free, its generation kept for the next incarnation. */
  free: { from: ['DELETING'], to: 'DELETED' },
  /** Its deletion was cancelled in its grace window: the same incarnation, writable again. */
  restore: { from: ['DELETING'], to: 'ACTIVE' },
} as const satisfies Record<string, Transition<StreamState>>;

export const STREAM_ACTIVITIES = {
  /** An ingest is admitted only into an ACTIVE stream. */
  ingest: { in: ['ACTIVE'] },
  /** A plan previews the deletion of an ACTIVE stream (one being deleted has its receipt). */
  plan: { in: ['ACTIVE'] },
} as const satisfies Record<string, Activity<StreamState>>;

export const DELETION_TRANSITIONS = {
  /** The tombstone's record, without a grace window: created PENDING. */
  request: { from: [], to: 'PENDING' },
  /** The tombstone's record, with a grace window: created SCHEDULED, its data untouched. */
  schedule: { from: [], to: 'SCHEDULED' },
  /** The grace window is over (or the deletion was expedited): it may start. */
  begin: { from: ['SCHEDULED'], to: 'PENDING' },
  /** Taken back within the grace window: nothing was, or will be, deleted. */
  cancel: { from: ['SCHEDULED'], to: 'CANCELLED' },
  /** Every chain of the round is registered: the pages may run. */
  start: { from: ['PENDING'], to: 'RUNNING' },
  /** Verification found the location not empty: list it again in a new round. */
  nextRound: { from: ['RUNNING'], to: 'PENDING' },
  /** Verification found the location empty. */
  complete: { from: ['RUNNING'], to: 'COMPLETED' },
  /** Keys that cannot be deleted, a location that never empties, or a deletion that stalled. */
  fail: { from: ['PENDING', 'RUNNING'], to: 'FAILED' },
  /** An operator starts a FAILED deletion again, as a new round. */
  retry: { from: ['FAILED'], to: 'PENDING' },
} as const satisfies Record<string, Transition<DeletionState>>;

export const DELETION_ACTIVITIES = {
  /** A chain of the round has ended with no page open. */
  settle: { in: ['RUNNING'] },
  /** Progress is marked for the sweeper; a worker learns the deletion is still running. */
  heartbeat: { in: ['RUNNING'] },
  /** One worker claims the verification of a round whose chains have all settled. */
  verify: { in: ['RUNNING'] },
  /** The sweeper claims a deletion that made no progress, for one more attempt. */
  resume: { in: ['PENDING', 'RUNNING'] },
} as const satisfies Record<string, Activity<DeletionState>>;

export type DeletionTransition = keyof typeof DELETION_TRANSITIONS;
export type StreamTransition = keyof typeof STREAM_TRANSITIONS;

/** Deletions under way: the sweeper watches them for progress. */
export const OPEN_DELETION_STATES = DELETION_ACTIVITIES.resume.in;

/** Deletions that have ended, one way or another: their receipts no longer change. */
export const ENDED_DELETION_STATES = ['COMPLETED', 'FAILED', 'CANCELLED'] as const;

export const canDeletion = (
  step: DeletionTransition | keyof typeof DELETION_ACTIVITIES,
  state: DeletionState,
): boolean => {
  const rule =
    step in DELETION_TRANSITIONS
      ? DELETION_TRANSITIONS[step as DeletionTransition].from
      : DELETION_ACTIVITIES[step as keyof typeof DELETION_ACTIVITIES].in;
  return (rule as readonly DeletionState[]).includes(state);
};

export const isOpen = (state: DeletionState) =>
  (OPEN_DELETION_STATES as readonly DeletionState[]).includes(state);

export const hasEnded = (state: DeletionState) =>
  (ENDED_DELETION_STATES as readonly DeletionState[]).includes(state);
