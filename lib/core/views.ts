import type { DeletionState, StreamState } from './lifecycle.ts';
import { s3Uri } from './names.ts';
import type { DeletionRecord, DeletionTotals, KeyFailure, StreamRecord } from './records.ts';

/** What the API answers: a stream, and a deletion's receipt. */

export interface StreamView {
  tenant: string;
  stream: string;
  state: Exclude<StreamState, 'DELETED'>;
  generation: number;
  location: string;
  createdAt: string;
  deletionId?: string;
  /** Days of `dt=` partitions kept, when the stream has a retention policy. */
  retentionDays?: number;
  /** The partition deletion under way, if any. */
  partitionDeletionId?: string;
}

export interface DeletionReceipt {
  deletionId: string;
  tenant: string;
  stream: string;
  generation: number;
  location: string;
  state: DeletionState;
  objectsDeleted: number;
  bytesDeleted: number;
  multipartUploadsAborted: number;
  requestedAt: string;
  executeAfter: string;
  completedAt?: string;
  /** When a listing of the whole location (objects, versions, uploads) came back empty. */
  verifiedAt?: string;
  cancelledAt?: string;
  attempts: number;
  /** Keys that could not be deleted, or a key-less reason (a stalled deletion). */
  failures?: Array<{ key?: string; versionId?: string; code: string; message: string }>;
  failedObjects?: number;
  /** A partition deletion: the `dt=` partitions of days strictly before this one. */
  partitionsBefore?: string;
  /** The tenant offboarding that took this deletion in. */
  offboardingId?: string;
}

export function toStreamView(record: StreamRecord): StreamView {
  if (record.state === 'DELETED') throw new Error('a DELETED stream has no view');
  return {
    tenant: record.tenant,
    stream: record.stream,
    state: record.state,
    generation: record.generation,
    location: s3Uri(record.bucket, record.prefix),
    createdAt: record.createdAt,
    ...(record.deletionId ? { deletionId: record.deletionId } : {}),
    ...(record.retentionDays ? { retentionDays: record.retentionDays } : {}),
    ...(record.partitionDeletionId ? { partitionDeletionId: record.partitionDeletionId } : {}),
  };
}

/** The receipt of a deletion, with its totals (from its chains while it runs) and failures. */
export function toReceipt(
  record: DeletionRecord,
  totals: DeletionTotals = record,
  failures: KeyFailure[] = [],
): DeletionReceipt {
  const failed = failures.length > 0 || record.reason !== undefined || totals.failedObjects > 0;
  const reasons = record.reason ? [record.reason] : [];
  return {
    deletionId: record.deletionId,
    tenant: record.tenant,
    stream: record.stream,
    generation: record.generation,
    location: s3Uri(record.bucket, record.prefix),
    state: record.state,
    objectsDeleted: totals.objectsDeleted,
    bytesDeleted: totals.bytesDeleted,
    multipartUploadsAborted: totals.multipartUploadsAborted ?? record.multipartUploadsAborted ?? 0,
    requestedAt: record.requestedAt,
    executeAfter: record.executeAfter ?? record.requestedAt,
    ...(record.completedAt ? { completedAt: record.completedAt } : {}),
    ...(record.verifiedAt ? { verifiedAt: record.verifiedAt } : {}),
    ...(record.cancelledAt ? { cancelledAt: record.cancelledAt } : {}),
    attempts: record.attempts,
    ...(record.before ? { partitionsBefore: record.before } : {}),
    ...(record.offboardingId ? { offboardingId: record.offboardingId } : {}),
    ...(failed ? { failures: [...reasons, ...failures], failedObjects: totals.failedObjects } : {}),
  };
}
