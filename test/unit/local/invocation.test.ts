import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskTimedOutError, withTimeout } from '../../../lib/local/invocation.ts';

describe('a local invocation, held to its function timeout as Lambda holds it', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails with "Task timed out" once its function timeout has passed', async () => {
    // Arrange: a 60 s function whose invocation never ends
    vi.useFakeTimers();
    const invoke = withTimeout(() => new Promise<never>(() => {}), 60);

    // Act
    const outcome = invoke({});
    const settled = expect(outcome).rejects.toThrow(TaskTimedOutError);
    await vi.advanceTimersByTimeAsync(60_000);

    // Assess
    await settled;
    await expect(outcome).rejects.toThrow('Task timed out after 60.00 seconds');
  });

  it('answers what the handler answers within its timeout, and leaves no timer behind', async () => {
    // Arrange
    vi.useFakeTimers();
    const invoke = withTimeout(async (event: { n: number }) => ({ twice: event.n * 2 }), 60);

    // Act
    const answer = await invoke({ n: 21 });

    // Assess
    expect(answer).toEqual({ twice: 42 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes the handler's own error on unchanged", async () => {
    const invoke = withTimeout(async () => {
      throw new Error('boom');
    }, 60);

    await expect(invoke({})).rejects.toThrow('boom');
  });
});
