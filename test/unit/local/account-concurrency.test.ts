import { describe, expect, it } from 'vitest';
import {
  AccountConcurrency,
  TooManyRequestsError,
} from '../../../lib/local/account-concurrency.ts';

describe('AccountConcurrency', () => {
  it('throttles an invoke above the limit until one ends', () => {
    // Prepare
    const account = new AccountConcurrency(2);
    const first = account.tryAcquire();
    account.tryAcquire();

    // Act
    const third = account.tryAcquire();
    first?.();
    const fourth = account.tryAcquire();

    // Assess
    expect(third).toBeUndefined();
    expect(fourth).toBeDefined();
    expect(account.throttles).toBe(1);
    expect(account.running).toBe(2);
  });

  it('gives up retrying at the deadline, as an SQS batch at its visibility timeout', async () => {
    // Prepare
    const account = new AccountConcurrency(1);
    account.tryAcquire();

    // Act
    const release = await account.acquire({ until: Date.now() + 100 });

    // Assess
    expect(release).toBeUndefined();
    expect(account.throttles).toBeGreaterThan(1);
  });

  it('lets a gated invoke through once a slot frees, and fails it once told to give up', async () => {
    // Prepare
    const account = new AccountConcurrency(1);
    const held = account.tryAcquire();
    let stopping = false;
    const gated = account.gate(
      async (event: string) => event,
      () => stopping,
    );

    // Act
    const through = gated('a');
    held?.();
    const answer = await through;
    account.tryAcquire();
    const refused = gated('b');
    stopping = true;

    // Assess
    expect(answer).toBe('a');
    await expect(refused).rejects.toBeInstanceOf(TooManyRequestsError);
  });

  it('refuses a limit below 1', () => {
    expect(() => new AccountConcurrency(0)).toThrow(/at least 1/);
  });
});
