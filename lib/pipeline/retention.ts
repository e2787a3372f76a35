import {
  type Clock,
  DeletionNotFoundError,
  dayOf,
  daysBefore,
  PartitionDeletionInProgressError,
  StreamDeletingError,
  StreamNotFoundError,
} from '../core/index.ts';
import { type DeletionStore, PolicyChangedError, type StreamStore } from '../store/index.ts';
import { eachInIsolation, type SweepFailed } from './isolation.ts';

export interface RetentionOptions {
  readonly streams: Pick<StreamStore, 'withRetention'>;
  readonly deletions: Pick<DeletionStore, 'requestPartitions'>;
  readonly clock: Clock;
}

export interface RetentionReport {
  /** Streams with a policy. */
  policies: number;
  /** Of them, those whose run today this call claimed (with its request, in one write). */
  claimed: number;
  /** Partition deletions requested (a run may find one under way already). */
  requested: number;
  /** Streams (or the listing) whose run threw: each was reported, and the next one run. */
  errors?: number;
}

/**
 * The daily retention run, at every sweep: each stream with a policy of N days gets a partition
 * deletion of the `dt=` partitions of days before today minus N, at most one a day per stream
 * however many sweeps repeat or overlap: the day's run is claimed with a condition in the
 * request's own transaction, which also holds only while the policy is still N days. So a sweep
 * that dies, or a request refused for now (an older partition deletion under way), leaves the
 * day to the next sweep. Each stream in isolation: one whose request throws (a bug, a permission
 * missing) is reported to `failed`, its day left to a later sweep, and the next stream run.
 */
export class RetentionRunner {
  readonly #streams: RetentionOptions['streams'];
  readonly #deletions: RetentionOptions['deletions'];
  readonly #clock: Clock;

  constructor(options: RetentionOptions) {
    this.#streams = options.streams;
    this.#deletions = options.deletions;
    this.#clock = options.clock;
  }

  async run({ failed }: { failed?: SweepFailed } = {}): Promise<RetentionReport> {
    const report: RetentionReport = { policies: 0, claimed: 0, requested: 0 };
    const now = this.#clock.now();
    const today = dayOf(now);
    const { failures } = await eachInIsolation(
      () => this.#streams.withRetention(),
      {
        list: 'list retention policies',
        item: 'run retention',
        keys: ({ tenant, stream }) => ({ tenant, stream }),
      },
      failed,
      async (stream) => {
        report.policies++;
        const days = stream.retentionDays;
        if (stream.state !== 'ACTIVE' || !days) return;
        if (stream.retentionRunOn !== undefined && stream.retentionRunOn >= today) return;
        try {
          // The index lags and this page was read a while ago: the request (and its claim)
          // holds only while the policy is still `days` and the day unclaimed, so a policy
          // removed or changed since is not applied (a later sweep reads the new one).
          const { created } = await this.#deletions.requestPartitions(
            stream.tenant,
            stream.stream,
            daysBefore(now, days),
            { days, today },
          );
          if (created) {
            report.claimed++;
            report.requested++;
          }
        } catch (error) {
          // Deleted or being deleted; the policy changed or the day claimed by another sweep;
          // or an older partition deletion still under way (a later sweep asks again).
          if (!isSkippable(error)) throw error;
        }
      },
    );
    return failures > 0 ? { ...report, errors: failures } : report;
  }
}

const isSkippable = (error: unknown) =>
  error instanceof StreamDeletingError ||
  error instanceof StreamNotFoundError ||
  error instanceof DeletionNotFoundError ||
  error instanceof PartitionDeletionInProgressError ||
  error instanceof PolicyChangedError;
