import { setTimeout as delay } from 'node:timers/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { clockOf } from '../../../lib/core/index.ts';
import { EventWriter } from '../../../lib/s3/event-writer.ts';
import { aStream, NOW } from '../../helpers/records.ts';

/** An S3 client whose PutObject takes 50 ms, and gives up as the SDK does once aborted. */
function slowS3() {
  const send = vi.fn(async (_command: unknown, options?: { abortSignal?: AbortSignal }) => {
    await delay(50);
    options?.abortSignal?.throwIfAborted();
    return {};
  });
  return { client: { send } as unknown as S3Client, send };
}

const admittedSecondsAgo = (seconds: number) =>
  aStream({ lastIngestAt: new Date(NOW.getTime() - seconds * 1000).toISOString() });

describe('EventWriter, the deadline of a write', () => {
  it('counts from the ingest’s admission: an admit that took the whole deadline writes nothing', async () => {
    // Prepare: admitted 20 s ago (an admit the SDK retried), with 10 s to write from admission
    const { client } = slowS3();
    const writer = new EventWriter({ client, timeoutMs: 10_000, clock: clockOf(() => NOW) });

    // Act
    const writing = writer.write(admittedSecondsAgo(20), new TextEncoder().encode('[1]'));

    // Assess: abandoned, inside the grace a deletion waits for it (which counts from admission)
    await expect(writing).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('writes an ingest admitted just now, under its key of the day', async () => {
    // Prepare
    const { client, send } = slowS3();
    const writer = new EventWriter({
      client,
      timeoutMs: 10_000,
      clock: clockOf(() => NOW),
      newId: () => 'id',
    });

    // Act
    const key = await writer.write(admittedSecondsAgo(0), new TextEncoder().encode('[1]'));

    // Assess
    expect(key).toBe(`${aStream().prefix}dt=2026-03-01/20260301T120000000Z-id.json`);
    expect(send).toHaveBeenCalledOnce();
  });
});
