import { BadRequestError, parseCutoff, toReceipt, toStreamView } from '../core/index.ts';
import type { DeletionStore, StreamStore } from '../store/index.ts';
import type { Receipts } from './receipts.ts';
import { accepted, type Operations, streamOf, tenantOf } from './request.ts';

export interface PartitionOperationsOptions {
  readonly streams: Pick<StreamStore, 'setRetention'>;
  readonly deletions: Pick<DeletionStore, 'requestPartitions'>;
  /** A repeated request's deletion under way, with its exact totals. */
  readonly receipts: Pick<Receipts, 'of'>;
  /** Today, for the cutoff check (UTC). @default the system clock */
  readonly now?: () => Date;
}

/** The longest retention: a hundred years. */
export const MAX_RETENTION_DAYS = 36_500;

/** Partition deletion and retention: old `dt=` partitions go, the stream stays ACTIVE. */
export function partitionOperations({
  streams,
  deletions,
  receipts,
  now = () => new Date(),
}: PartitionOperationsOptions) {
  return {
    deletePartitions: async (request) => {
      const [tenant, stream] = [tenantOf(request), streamOf(request)];
      const before = parseCutoff(request.query.before, now());
      const { created, deletion } = await deletions.requestPartitions(tenant, stream, before);
      return accepted(tenant, created ? toReceipt(deletion) : await receipts.of(deletion));
    },

    putRetention: async (request) => {
      const [tenant, stream] = [tenantOf(request), streamOf(request)];
      const record = await streams.setRetention(tenant, stream, retentionDaysOf(request.body));
      return {
        status: 200,
        body: toStreamView(record),
        subject: { generation: record.generation },
      };
    },

    deleteRetention: async (request) => {
      const record = await streams.setRetention(tenantOf(request), streamOf(request), undefined);
      return {
        status: 200,
        body: toStreamView(record),
        subject: { generation: record.generation },
      };
    },
  } satisfies Operations<string>;
}

function retentionDaysOf(body: Buffer): number {
  const invalid = () =>
    new BadRequestError(
      'InvalidRetention',
      `the body must be {"days": N}, N a whole number of days from 1 to ${MAX_RETENTION_DAYS}`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalid();
  }
  const days = (parsed as { days?: unknown } | null)?.days;
  if (
    typeof days !== 'number' ||
    !Number.isInteger(days) ||
    days < 1 ||
    days > MAX_RETENTION_DAYS
  ) {
    throw invalid();
  }
  return days;
}
