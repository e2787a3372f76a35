import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../../lib/cli/failure.ts';

describe('describeFailure, for an error nobody expected', () => {
  const bug = new TypeError("Cannot read properties of undefined (reading 'length')");

  it('says what went wrong and how to see where, without a stack trace', () => {
    // Act
    const failure = describeFailure(bug, { json: false });

    // Assess
    expect(failure.code).toBe(1);
    expect(failure.lines).toEqual([
      "unexpected error: Cannot read properties of undefined (reading 'length')",
      'hint: run it again with LETHE_DEBUG=1 to see where it happened, and report it',
    ]);
  });

  it('prints the stack with LETHE_DEBUG', () => {
    // Act
    const failure = describeFailure(bug, { json: false, debug: true });

    // Assess
    expect(failure.code).toBe(1);
    expect(failure.lines).toEqual([bug.stack]);
  });
});
