import { describe, expect, it, vi } from 'vitest';
import { clockOf, type StreamRecord } from '../../../lib/core/index.ts';
import { RetentionRunner } from '../../../lib/pipeline/index.ts';
import type { RetentionOptions } from '../../../lib/pipeline/retention.ts';
import {
  type DeletionStore,
  PolicyChangedError,
  type StreamStore,
} from '../../../lib/store/index.ts';
import { aDeletion, aStream } from '../../helpers/records.ts';

const NOW = new Date('2026-01-10T06:00:00.000Z');

/** A runner over streams read from the index, whose claims `refused` turns down. */
function runner(read: StreamRecord[], refused: (stream: StreamRecord) => boolean = () => false) {
  const streams = {
    withRetention: vi.fn<StreamStore['withRetention']>(async function* () {
      yield* read;
    }),
    claimRetentionRun: vi.fn<StreamStore['claimRetentionRun']>(async (stream) => !refused(stream)),
  } satisfies RetentionOptions['streams'];
  const deletions = {
    requestPartitions: vi.fn<DeletionStore['requestPartitions']>(async () => ({
      created: true,
      deletion: aDeletion(),
    })),
  } satisfies RetentionOptions['deletions'];
  const run = new RetentionRunner({ streams, deletions, clock: clockOf(() => NOW) });
  return { run, streams, deletions };
}

describe('RetentionRunner', () => {
  it('claims each run with the number of days it read, and takes the cutoff from that number', async () => {
    const { run, streams, deletions } = runner([aStream({ retentionDays: 3 })]);

    const report = await run.run();

    expect(report).toEqual({ policies: 1, claimed: 1, requested: 1 });
    expect(streams.claimRetentionRun).toHaveBeenCalledWith(
      expect.objectContaining({ tenant: 'acme', stream: 'logs' }),
      3,
      '2026-01-10',
    );
    expect(deletions.requestPartitions).toHaveBeenCalledWith('acme', 'logs', '2026-01-07', 3);
  });

  it('skips a stream whose claim is refused (its policy removed or changed since the read), and goes on', async () => {
    // Arrange: the first stream's policy changed after the index was read
    const changed = aStream({ stream: 'changed', retentionDays: 1 });
    const kept = aStream({ stream: 'kept', retentionDays: 2 });
    const { run, streams, deletions } = runner(
      [changed, kept],
      (stream) => stream.stream === 'changed',
    );

    // Act
    const report = await run.run();

    // Assess: no deletion for it, no error, one claim each (no retry)
    expect(report).toEqual({ policies: 2, claimed: 1, requested: 1 });
    expect(streams.claimRetentionRun).toHaveBeenCalledTimes(2);
    expect(deletions.requestPartitions).toHaveBeenCalledTimes(1);
    expect(deletions.requestPartitions).toHaveBeenCalledWith('acme', 'kept', '2026-01-08', 2);
  });

  it('skips a stream whose policy changed between its claim and its request, and goes on', async () => {
    // Arrange: the request finds the policy changed since the claim (PolicyChangedError)
    const { run, deletions } = runner([
      aStream({ stream: 'changed', retentionDays: 1 }),
      aStream({ stream: 'kept', retentionDays: 2 }),
    ]);
    deletions.requestPartitions.mockRejectedValueOnce(new PolicyChangedError('acme', 'changed'));

    // Act
    const report = await run.run();

    // Assess
    expect(report).toEqual({ policies: 2, claimed: 2, requested: 1 });
  });

  it('does not claim a stream read without a policy, not ACTIVE, or already run today', async () => {
    const { run, streams, deletions } = runner([
      aStream({ stream: 'none' }),
      aStream({ stream: 'deleting', state: 'DELETING', retentionDays: 1 }),
      aStream({ stream: 'done', retentionDays: 1, retentionRunOn: '2026-01-10' }),
    ]);

    const report = await run.run();

    expect(report).toEqual({ policies: 3, claimed: 0, requested: 0 });
    expect(streams.claimRetentionRun).not.toHaveBeenCalled();
    expect(deletions.requestPartitions).not.toHaveBeenCalled();
  });
});
