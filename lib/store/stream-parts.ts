import type { StreamStore } from './stream-store.ts';

/** The stream's parts in a deletion's transactions, as DeletionStore uses them. */
export type StreamParts = Pick<
  StreamStore,
  | 'find'
  | 'tombstone'
  | 'free'
  | 'restore'
  | 'rescheduled'
  | 'refusal'
  | 'claimPartitions'
  | 'claimRetentionRun'
  | 'releasePartitions'
>;
