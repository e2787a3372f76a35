import { describe, expect, it, vi } from 'vitest';
import { ApiError, type LetheClient, UnreachableError } from '../../../lib/cli/client.ts';
import { waitForDeletion } from '../../../lib/cli/wait.ts';
import { type DeletionReceipt, toReceipt } from '../../../lib/core/index.ts';
import { aDeletion } from '../../helpers/records.ts';

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
    expect(sleep.mock.calls).toEqual([[750], [750]]);
    expect(client.getDeletion.mock.calls).toEqual([
      ['acme', '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c'],
      ['acme', '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c'],
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
