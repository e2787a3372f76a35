import {
  DELETION_ACTIVITIES,
  DELETION_TRANSITIONS,
  ENDED_DELETION_STATES,
  OFFBOARDING_TRANSITIONS,
  PLAN_TRANSITIONS,
  STREAM_ACTIVITIES,
  STREAM_TRANSITIONS,
} from '../core/index.ts';

/**
 * Condition expressions, built from named parts so that a reader sees the rule, not the
 * syntax. The state rules come from the lifecycle tables in lib/core: no store writes a
 * state literal into a condition.
 */
export interface Condition {
  readonly expression: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
}

/** The item does not exist yet. */
export const isAbsent: Condition = { expression: 'attribute_not_exists(pk)' };

/** The item exists. */
export const exists: Condition = { expression: 'attribute_exists(pk)' };

/** The item's state is one of `states` (each condition's values get their own names). */
function stateIn(states: readonly string[], tag: string): Condition {
  if (states.length === 0) return isAbsent;
  const values = Object.fromEntries(states.map((state, index) => [`:${tag}${index}`, state]));
  return {
    expression: `#state IN (${Object.keys(values).join(', ')})`,
    names: { '#state': 'state' },
    values,
  };
}

/** The deletion has ended: COMPLETED, FAILED or CANCELLED. */
export const deletionHasEnded: Condition = stateIn(ENDED_DELETION_STATES, 'ended');

/** The deletion may take this step: its state is one the lifecycle allows it from. */
export const deletionMay = (
  step: keyof typeof DELETION_TRANSITIONS | keyof typeof DELETION_ACTIVITIES,
): Condition =>
  step in DELETION_TRANSITIONS
    ? stateIn(DELETION_TRANSITIONS[step as keyof typeof DELETION_TRANSITIONS].from, 'from')
    : stateIn(DELETION_ACTIVITIES[step as keyof typeof DELETION_ACTIVITIES].in, 'in');

/** The stream may take this step. */
export const streamMay = (
  step: keyof typeof STREAM_TRANSITIONS | keyof typeof STREAM_ACTIVITIES,
): Condition =>
  step in STREAM_TRANSITIONS
    ? stateIn(STREAM_TRANSITIONS[step as keyof typeof STREAM_TRANSITIONS].from, 'from')
    : stateIn(STREAM_ACTIVITIES[step as keyof typeof STREAM_ACTIVITIES].in, 'in');

/** The offboarding may take this step: its state is one the step is allowed from. */
export const offboardingMay = (step: keyof typeof OFFBOARDING_TRANSITIONS): Condition => {
  const from = stateIn(OFFBOARDING_TRANSITIONS[step].from, 'from');
  // A new offboarding may replace one that ended, or be the tenant's first.
  return step === 'request'
    ? { ...from, expression: `attribute_not_exists(pk) OR ${from.expression}` }
    : from;
};

/** This offboarding, still RUNNING: one cancelled, ended or replaced takes no stream in. */
export const offboardingTakesIn = (offboardingId: string): Condition =>
  all(
    equals('offboardingId', offboardingId),
    stateIn(OFFBOARDING_TRANSITIONS.cancel.from, 'running'),
  );

/** The plan may take this step: its state is one the step is allowed from. */
export const planMay = (step: keyof typeof PLAN_TRANSITIONS): Condition =>
  stateIn(PLAN_TRANSITIONS[step].from, 'from');

/** The attribute equals `value`, bound to `:<attribute>` (which an update may use too). */
export const equals = (attribute: string, value: unknown): Condition => ({
  expression: `#${attribute} = :${attribute}`,
  names: { [`#${attribute}`]: attribute },
  values: { [`:${attribute}`]: value },
});

/** The item is in this round (a deletion) or was made for it: binds `:round`. */
export const atRound = (round: number) => equals('round', round);

/** The item belongs to this incarnation of its stream. */
export const atGeneration = (generation: number) => equals('generation', generation);

/**
 * The stream has no ingest in flight: none admitted, or every one admitted has finished, and
 * none of them failed (`hasIngestInFlight`).
 */
export const noIngestInFlight: Condition = {
  // DynamoDB removes a set attribute once its last member is removed.
  expression: 'attribute_not_exists(ingestsInFlight) AND attribute_not_exists(abandonedIngestAt)',
};

/** Every condition holds. */
export function all(...conditions: Condition[]): Condition {
  return {
    expression: conditions.map((condition) => `(${condition.expression})`).join(' AND '),
    names: Object.assign({}, ...conditions.map((condition) => condition.names ?? {})),
    values: Object.assign({}, ...conditions.map((condition) => condition.values ?? {})),
  };
}
