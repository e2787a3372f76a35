import { afterEach, describe, expect, it } from 'vitest';
import {
  armFailpoint,
  armFromSpec,
  disarmFailpoints,
  FailpointError,
  failpoint,
  firedCount,
} from '../../../lib/support/index.ts';

describe('failpoints', () => {
  afterEach(() => disarmFailpoints());

  it('does nothing when nothing is armed', () => {
    expect(() => failpoint('worker.after-delete')).not.toThrow();
    expect(firedCount('worker.after-delete')).toBe(0);
  });

  it('throws a FailpointError as many times as armed, then stops', () => {
    armFailpoint('worker.after-list', 'error', 2);

    expect(() => failpoint('worker.after-list')).toThrow(FailpointError);
    expect(() => failpoint('worker.after-list')).toThrow(FailpointError);
    expect(() => failpoint('worker.after-list')).not.toThrow();
    expect(firedCount('worker.after-list')).toBe(2);
  });

  it('leaves other failpoints alone', () => {
    armFailpoint('finalize.after-verify', 'error');

    expect(() => failpoint('finalize.before-verify')).not.toThrow();
  });

  it('arms from a specification', () => {
    armFromSpec('dispatcher.before-enqueue=error*3, sweeper.after-claim=error');

    for (let i = 0; i < 3; i++) expect(() => failpoint('dispatcher.before-enqueue')).toThrow();
    expect(() => failpoint('dispatcher.before-enqueue')).not.toThrow();
    expect(() => failpoint('sweeper.after-claim')).toThrow(/sweeper.after-claim/);
  });

  it.each(['nope=error', 'worker.after-list=explode', 'worker.after-list'])(
    'refuses the specification %s',
    (spec) => {
      expect(() => armFromSpec(spec)).toThrow(/bad failpoint/);
    },
  );
});
