import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canDeletion,
  DELETION_ACTIVITIES,
  DELETION_STATES,
  DELETION_TRANSITIONS,
  type DeletionState,
  type DeletionTransition,
  hasEnded,
  isOpen,
  STREAM_ACTIVITIES,
  STREAM_TRANSITIONS,
} from '../../../lib/core/index.ts';

const STEPS = Object.keys(DELETION_TRANSITIONS) as DeletionTransition[];
const CREATING = STEPS.filter((step) => DELETION_TRANSITIONS[step].from.length === 0);

/** Applies the steps the lifecycle allows, in order, from the deletion's creation. */
function walk(created: DeletionTransition, steps: DeletionTransition[]) {
  const path: DeletionState[] = [DELETION_TRANSITIONS[created].to];
  for (const step of steps) {
    const state = path.at(-1) as DeletionState;
    if (canDeletion(step, state)) path.push(DELETION_TRANSITIONS[step].to);
  }
  return path;
}

describe('the deletion lifecycle (invariant 9: cancel is safe)', () => {
  it('is cancelled only from SCHEDULED, the one state a start also leaves from', () => {
    expect(DELETION_STATES.filter((state) => canDeletion('cancel', state))).toEqual(['SCHEDULED']);
    expect(DELETION_STATES.filter((state) => canDeletion('begin', state))).toEqual(['SCHEDULED']);
    // Each leaves SCHEDULED, so whichever is written first fails the other's condition.
    expect(canDeletion('begin', DELETION_TRANSITIONS.cancel.to)).toBe(false);
    expect(canDeletion('cancel', DELETION_TRANSITIONS.begin.to)).toBe(false);
  });

  it('lets no work run on a deletion that has not started or was cancelled', () => {
    for (const activity of Object.keys(DELETION_ACTIVITIES) as Array<
      keyof typeof DELETION_ACTIVITIES
    >) {
      expect(canDeletion(activity, 'SCHEDULED'), activity).toBe(false);
      expect(canDeletion(activity, 'CANCELLED'), activity).toBe(false);
    }
    expect(STEPS.filter((step) => canDeletion(step, 'CANCELLED'))).toEqual([]);
  });

  it('never cancels a deletion that was ever pending or running, whatever the steps', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CREATING),
        fc.array(fc.constantFrom(...STEPS), { maxLength: 30 }),
        (created, steps) => {
          const path = walk(created, steps);
          if (path.at(-1) !== 'CANCELLED') return;
          expect(path).toEqual(['SCHEDULED', 'CANCELLED']);
        },
      ),
    );
  });

  it('reaches RUNNING only through PENDING, and ends only from a state under way', () => {
    for (const step of STEPS) {
      const { from, to } = DELETION_TRANSITIONS[step];
      if (to === 'RUNNING') expect(from).toEqual(['PENDING']);
      if (hasEnded(to) && to !== 'CANCELLED') {
        expect(from.every((state: DeletionState) => isOpen(state))).toBe(true);
      }
    }
  });
});

describe('the stream lifecycle (invariant 2: no create or ingest during deletion)', () => {
  it('admits ingest and plans into an ACTIVE stream only', () => {
    expect(STREAM_ACTIVITIES.ingest.in).toEqual(['ACTIVE']);
    expect(STREAM_ACTIVITIES.plan.in).toEqual(['ACTIVE']);
  });

  it('creates a new incarnation only of a name that a completed deletion freed', () => {
    expect(STREAM_TRANSITIONS.create.from).toEqual(['DELETED']);
  });

  it('leaves DELETING only by the deletion completing or being cancelled', () => {
    const leaving = Object.entries(STREAM_TRANSITIONS).filter(([, transition]) =>
      (transition.from as readonly string[]).includes('DELETING'),
    );
    expect(Object.fromEntries(leaving.map(([step, { to }]) => [step, to]))).toEqual({
      free: 'DELETED',
      restore: 'ACTIVE',
    });
  });
});
