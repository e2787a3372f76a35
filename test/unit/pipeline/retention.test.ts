import { describe, expect, it, vi } from 'vitest';
import { clockOf, type StreamRecord } from '../../../lib/core/index.ts';
import { RetentionRunner, type SweepFailed } from '../../../lib/pipeline/index.ts';
import type { RetentionOptions } from '../../../lib/pipeline/retention.ts';
import {
  type DeletionStore,
  PolicyChangedError,
  type StreamStore,
} from '../../../lib/store/index.ts';
import { aDeletion, aStream } from '../../helpers/records.ts';

const NOW = new Date('2026-01-10T06:00:00.000Z');

/** A runner over streams read from the index, whose requests `refused` turns down. */
function runner(read: StreamRecord[], refused: (stream: string) => boolean = () => false) {
  const streams = {
    withRetention: vi.fn<StreamStore['withRetention']>(async function* () {
      yield* read;
    }),
  } satisfies RetentionOptions['streams'];
  const deletions = {
    requestPartitions: vi.fn<DeletionStore['requestPartitions']>(async (tenant, stream) => {
      if (refused(stream)) throw new PolicyChangedError(tenant, stream);
      return { created: true, deletion: aDeletion() };
    }),
  } satisfies RetentionOptions['deletions'];
  const run = new RetentionRunner({ streams, deletions, clock: clockOf(() => NOW) });
  return { run, streams, deletions };
}

describe('RetentionRunner', () => {
  it('requests each run with the number of days it read, claiming the day with it, and takes the cutoff from that number', async () => {
    const { run, deletions } = runner([aStream({ retentionDays: 3 })]);

    const report = await run.run();

    expect(report).toEqual({ policies: 1, claimed: 1, requested: 1 });
    expect(deletions.requestPartitions).toHaveBeenCalledWith('acme', 'logs', '2026-01-07', {
      days: 3,
      today: '2026-01-10',
    });
  });

  it('skips a stream whose request is refused (its policy removed or changed since the read, or the day claimed), and goes on', async () => {
    // Arrange: the first stream's policy changed after the index was read
    const changed = aStream({ stream: 'changed', retentionDays: 1 });
    const kept = aStream({ stream: 'kept', retentionDays: 2 });
    const { run, deletions } = runner([changed, kept], (stream) => stream === 'changed');

    // Act
    const report = await run.run();

    // Assess: no deletion for it, no error, one request each (no retry)
    expect(report).toEqual({ policies: 2, claimed: 1, requested: 1 });
    expect(deletions.requestPartitions).toHaveBeenCalledTimes(2);
    expect(deletions.requestPartitions).toHaveBeenLastCalledWith('acme', 'kept', '2026-01-08', {
      days: 2,
      today: '2026-01-10',
    });
  });

  it('leaves a day whose request failed to a later sweep: nothing was claimed', async () => {
    // Arrange: the request dies (or an older partition deletion is still under way)
    const { run, deletions } = runner([aStream({ retentionDays: 1 })]);
    deletions.requestPartitions.mockRejectedValueOnce(new Error('killed'));
    expect(await run.run()).toEqual({ policies: 1, claimed: 0, requested: 0, errors: 1 });

    // Act: a later sweep of the same day
    const report = await run.run();

    // Assess
    expect(report).toEqual({ policies: 1, claimed: 1, requested: 1 });
    expect(deletions.requestPartitions).toHaveBeenCalledTimes(2);
  });

  it('does not request for a stream read without a policy, not ACTIVE, or already run today', async () => {
    const { run, deletions } = runner([
      aStream({ stream: 'none' }),
      aStream({ stream: 'deleting', state: 'DELETING', retentionDays: 1 }),
      aStream({ stream: 'done', retentionDays: 1, retentionRunOn: '2026-01-10' }),
    ]);

    const report = await run.run();

    expect(report).toEqual({ policies: 3, claimed: 0, requested: 0 });
    expect(deletions.requestPartitions).not.toHaveBeenCalled();
  });

  it('goes on to the next stream when a request throws, and reports the stream it could not run', async () => {
    // Arrange: the first stream's request fails every time (a bucket's permission missing, a bug)
    const broken = aStream({ tenant: 'poison', stream: 'broken', retentionDays: 1 });
    const kept = aStream({ stream: 'kept', retentionDays: 2 });
    const { run, deletions } = runner([broken, kept]);
    deletions.requestPartitions.mockRejectedValueOnce(new Error('AccessDenied'));
    const failed = vi.fn<SweepFailed>();

    // Act
    const report = await run.run({ failed });

    // Assess
    expect(report).toEqual({ policies: 2, claimed: 1, requested: 1, errors: 1 });
    expect(deletions.requestPartitions).toHaveBeenLastCalledWith('acme', 'kept', '2026-01-08', {
      days: 2,
      today: '2026-01-10',
    });
    expect(failed).toHaveBeenCalledExactlyOnceWith({
      step: 'run retention',
      keys: { tenant: 'poison', stream: 'broken' },
      error: new Error('AccessDenied'),
    });
  });

  it('reports the policies it could not read, and ends', async () => {
    // Arrange
    const { run, streams } = runner([]);
    streams.withRetention.mockImplementation(async function* () {
      yield aStream({ retentionDays: 1, retentionRunOn: '2026-01-10' });
      throw new Error('DynamoDB is unreachable');
    });
    const failed = vi.fn<SweepFailed>();

    // Act
    const report = await run.run({ failed });

    // Assess
    expect(report).toEqual({ policies: 1, claimed: 0, requested: 0, errors: 1 });
    expect(failed).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ step: 'list retention policies', keys: {} }),
    );
  });
});
