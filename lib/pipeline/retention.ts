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

export interface RetentionOptions {
  readonly streams: Pick<StreamStore, 'withRetention' | 'claimRetentionRun'>;
  readonly deletions: Pick<DeletionStore, 'requestPartitions'>;
  readonly clock: Clock;
}

export interface RetentionReport {
  /** Streams with a policy. */
  policies: number;
  /** Of them, those whose run today this call claimed. */
  claimed: number;
  /** Partition deletions requested (a run may find one under way already). */
  requested: number;
}

/**
 * The daily retention run, at every sweep: each stream with a policy of N days gets a partition
 * deletion of the `dt=` partitions of days before today minus N, at most one a day per stream
 * however many sweeps repeat or overlap (the day's run is claimed with a condition first, which
 * also holds only while the policy is still N days).
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

  async run(): Promise<RetentionReport> {
    const report: RetentionReport = { policies: 0, claimed: 0, requested: 0 };
    const now = this.#clock.now();
    const today = dayOf(now);
    for await (const stream of this.#streams.withRetention()) {
      report.policies++;
      const days = stream.retentionDays;
      if (stream.state !== 'ACTIVE' || !days) continue;
      if (stream.retentionRunOn !== undefined && stream.retentionRunOn >= today) continue;
      // The index lags and this page was read a while ago: the claim holds only while the
      // policy is still `days`, so a policy removed or changed since is not applied (a later
      // sweep reads the new one). A refused claim is a skip, like the ones above.
      if (!(await this.#streams.claimRetentionRun(stream, days, today))) continue;
      report.claimed++;
      try {
        const before = daysBefore(now, days);
        // Requested only while the policy is still `days`, as the claim was.
        const { created } = await this.#deletions.requestPartitions(
          stream.tenant,
          stream.stream,
          before,
          days,
        );
        if (created) report.requested++;
      } catch (error) {
        // Deleted, being deleted, or an older partition deletion still under way: tomorrow.
        if (!isSkippable(error)) throw error;
      }
    }
    return report;
  }
}

const isSkippable = (error: unknown) =>
  error instanceof StreamDeletingError ||
  error instanceof StreamNotFoundError ||
  error instanceof DeletionNotFoundError ||
  error instanceof PartitionDeletionInProgressError ||
  error instanceof PolicyChangedError;
