import { describe, expect, it, vi } from 'vitest';
import { ApiError, type LetheClient, UnreachableError } from '../../../lib/cli/client.ts';
import { WaitInterrupted, waitForDeletion } from '../../../lib/cli/wait.ts';
import { type DeletionReceipt, toReceipt } from '../../../lib/core/index.ts';
import { aDeletion, DELETION_ID } from '../../helpers/records.ts';

const receipt = (overrides: Parameters<typeof aDeletion>[0] = {}): DeletionReceipt =>
  toReceipt(aDeletion(overrides));

/** A client whose reads answer or fail in turn. */
function reads(...answers: Array<DeletionReceipt | Error>) {
  const getDeletion = vi.fn<LetheClient['getDeletion']>(async () => {
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    if (next instanceof Error) throw next;
    return { status: 200, headers: new Headers(), body: next };
  });
  return { getDeletion };
}

const unreachable = () => new UnreachableError('cannot reach http://127.0.0.1:3000: ECONNRESET');

describe('waiting for a deletion', () => {
  it('reads the receipt every interval until it is COMPLETED', async () => {
    // Prepare
    const client = reads(
      receipt({ state: 'RUNNING' }),
      receipt({ state: 'COMPLETED', objectsDeleted: 9 }),
    );
    const sleep = vi.fn(async (_ms: number) => {});

    // Act
    const done = await waitForDeletion({
      client,
      receipt: receipt({ state: 'PENDING' }),
      intervalMs: 750,
      sleep,
    });

    // Assess
    expect(done.state).toBe('COMPLETED');
    expect(done.objectsDeleted).toBe(9);
    expect(sleep.mock.calls).toEqual([
      [750, undefined],
      [750, undefined],
    ]);
    expect(client.getDeletion.mock.calls).toEqual([
      ['acme', DELETION_ID, undefined],
      ['acme', DELETION_ID, undefined],
    ]);
  });

  it('returns at once for a receipt that has already ended', async () => {
    // Prepare
    const client = reads();

    // Act
    const done = await waitForDeletion({
      client,
      receipt: receipt({ state: 'FAILED' }),
      intervalMs: 1_000,
      sleep: async () => {},
    });

    // Assess
    expect(done.state).toBe('FAILED');
    expect(client.getDeletion).not.toHaveBeenCalled();
  });

  it('rides out a few failed reads (a restarting API, a 503)', async () => {
    // Prepare
    const client = reads(
      unreachable(),
      new ApiError(503, 'HTTP503', 'Service Unavailable', ''),
      receipt({ state: 'COMPLETED' }),
    );

    // Act
    const done = await waitForDeletion({
      client,
      receipt: receipt({ state: 'RUNNING' }),
      intervalMs: 1,
      sleep: async () => {},
      maxFailedReads: 2,
    });

    // Assess
    expect(done.state).toBe('COMPLETED');
    expect(client.getDeletion).toHaveBeenCalledTimes(3);
  });

  it('gives up after too many failed reads in a row', async () => {
    // Prepare
    const client = reads(unreachable(), unreachable(), unreachable());

    // Act
    const waiting = waitForDeletion({
      client,
      receipt: receipt({ state: 'RUNNING' }),
      intervalMs: 1,
      sleep: async () => {},
      maxFailedReads: 2,
    });

    // Assess
    await expect(waiting).rejects.toThrow('cannot reach http://127.0.0.1:3000: ECONNRESET');
    expect(client.getDeletion).toHaveBeenCalledTimes(3);
  });

  it('stops at once on an answer that will not change (a 404)', async () => {
    // Prepare
    const client = reads(
      new ApiError(404, 'DeletionNotFound', 'gone', ''),
      receipt({ state: 'COMPLETED' }),
    );

    // Act
    const waiting = waitForDeletion({
      client,
      receipt: receipt({ state: 'RUNNING' }),
      intervalMs: 1,
      sleep: async () => {},
    });

    // Assess
    await expect(waiting).rejects.toThrow('gone');
    expect(client.getDeletion).toHaveBeenCalledTimes(1);
  });
});

describe('waiting for a SCHEDULED deletion', () => {
  const executeAfter = '2026-03-01T12:01:00.000Z';
  const scheduled = receipt({ state: 'SCHEDULED', executeAfter, attempts: 0 });

  it('reads it every scheduledReadMs until its start is due, then every interval', async () => {
    // Prepare: 40 s before executeAfter, one tick every 5 s.
    let clock = Date.parse(executeAfter) - 40_000;
    const client = reads();
    const readAt: number[] = [];
    client.getDeletion.mockImplementation(async () => {
      readAt.push(clock);
      const next = [scheduled, scheduled, scheduled][readAt.length - 1];
      const body = next ?? receipt({ state: 'COMPLETED', executeAfter });
      return { status: 200, headers: new Headers(), body };
    });

    // Act
    const done = await waitForDeletion({
      client,
      receipt: scheduled,
      intervalMs: 5_000,
      sleep: async (ms) => {
        clock += ms;
      },
      wallNow: () => clock,
      scheduledReadMs: 20_000,
    });

    // Assess: reads 20 s and 40 s in (every fourth tick), then at every tick once due.
    expect(done.state).toBe('COMPLETED');
    const due = Date.parse(executeAfter);
    expect(readAt.map((at) => (at - due) / 1000)).toEqual([-20, 0, 5, 10]);
  });

  it('reads it every interval without a wall clock', async () => {
    // Prepare
    const client = reads(scheduled, receipt({ state: 'CANCELLED', executeAfter }));

    // Act
    const done = await waitForDeletion({
      client,
      receipt: scheduled,
      intervalMs: 1_000,
      sleep: async () => {},
    });

    // Assess
    expect(done.state).toBe('CANCELLED');
    expect(client.getDeletion).toHaveBeenCalledTimes(2);
  });
});

describe('Ctrl-C while waiting', () => {
  it('ends the wait with the last receipt read, and clears the progress line', async () => {
    // Prepare
    const controller = new AbortController();
    const client = reads(receipt({ state: 'RUNNING', objectsDeleted: 7 }));
    const reporter = { update: vi.fn(), finish: vi.fn() };
    let sleeps = 0;
    const sleep = async (_ms: number, signal?: AbortSignal) => {
      if (++sleeps === 2) controller.abort();
      if (signal?.aborted) throw new Error('The operation was aborted');
    };

    // Act
    const waiting = waitForDeletion({
      client,
      receipt: receipt({ state: 'PENDING' }),
      intervalMs: 1_000,
      sleep,
      reporter,
      signal: controller.signal,
    });

    // Assess
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WaitInterrupted);
    expect(error).toMatchObject({ receipt: { state: 'RUNNING', objectsDeleted: 7 } });
    expect(reporter.finish).toHaveBeenCalledTimes(1);
    expect(client.getDeletion).toHaveBeenCalledTimes(1);
  });

  it('does not wait for a read in flight to answer', async () => {
    // Prepare
    const controller = new AbortController();
    const client = reads();
    client.getDeletion.mockImplementation(() => {
      controller.abort();
      return new Promise(() => {});
    });

    // Act
    const waiting = waitForDeletion({
      client,
      receipt: receipt({ state: 'RUNNING' }),
      intervalMs: 1_000,
      sleep: async () => {},
      signal: controller.signal,
    });

    // Assess
    await expect(waiting).rejects.toThrow(WaitInterrupted);
    expect(client.getDeletion.mock.calls[0]?.[2]).toBe(controller.signal);
  });
});
