/** Records kept in the single Lethe table, and the views the API returns. */

export type StreamState = 'ACTIVE' | 'DELETING' | 'DELETED';
export type DeletionState = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED';

/** Partition of the sweeper's sparse index: only open (PENDING or RUNNING) deletions carry it. */
export const OPEN_DELETIONS = 'OPEN';

export const keys = {
  stream: (tenant: string, stream: string) => ({ pk: `TENANT#${tenant}`, sk: `STREAM#${stream}` }),
  deletion: (tenant: string, deletionId: string) => ({
    pk: `TENANT#${tenant}`,
    sk: `DELETION#${deletionId}`,
  }),
  chain: (deletionId: string, round: number, chainId: string) => ({
    pk: `DELETION#${deletionId}`,
    sk: `CHAIN#${round}#${chainId}`,
  }),
  chainsOf: (deletionId: string, round: number) => ({
    pk: `DELETION#${deletionId}`,
    skPrefix: `CHAIN#${round}#`,
  }),
  failure: (deletionId: string, round: number, key: string) => ({
    pk: `DELETION#${deletionId}`,
    sk: `FAILURE#${round}#${key}`,
  }),
  failuresOf: (deletionId: string, round: number) => ({
    pk: `DELETION#${deletionId}`,
    skPrefix: `FAILURE#${round}#`,
  }),
};

export interface StreamRecord {
  type: 'STREAM';
  tenant: string;
  stream: string;
  state: StreamState;
  generation: number;
  bucket: string;
  /** Key prefix of this incarnation, ending in `/`. */
  prefix: string;
  createdAt: string;
  updatedAt: string;
  deletionId?: string;
  /** Ingests admitted and not yet finished; a writer that died leaves its count behind. */
  inflightIngests?: number;
  lastIngestAt?: string;
}

export interface DeletionRecord {
  type: 'DELETION';
  deletionId: string;
  tenant: string;
  stream: string;
  generation: number;
  bucket: string;
  prefix: string;
  state: DeletionState;
  /** Each round lists the location afresh; a round ends in verification. */
  round: number;
  attempts: number;
  /** Totals, written when the deletion ends; while it runs, its chains hold the counts. */
  objectsDeleted: number;
  bytesDeleted: number;
  failedObjects: number;
  /** Chains of the current round, and how many of them have ended with no page open. */
  chainsTotal: number;
  chainsSettled: number;
  /** The last round whose verification a worker claimed (one listing of the location per round). */
  verifiedRound?: number;
  requestedAt: string;
  updatedAt: string;
  completedAt?: string;
  /** The bucket keeps versions: every version and delete marker is deleted, by version id. */
  versioned?: boolean;
  /** Why a deletion FAILED when no single key explains it (stalled, location never empties). */
  reason?: { code: string; message: string };
  expiresAt?: number;
}

/**
 * One chain of pages: every key under `prefix`, listed in order, one page at a time. The chain
 * item holds its own progress (cursor, open pages, counts), so a page touches only its chain.
 */
export interface ChainRecord {
  chainId: string;
  round: number;
  prefix: string;
  /** Index of the last page listed, -1 before the first. */
  lastPage: number;
  /** StartAfter for the next page: the last key listed so far. */
  lastKey?: string;
  ended: boolean;
  /** Pages listed whose deletion is not yet counted, by page number. */
  open: Record<string, PageRecord>;
  objectsDeleted: number;
  bytesDeleted: number;
  failedObjects: number;
  pagesDone: number;
  /** Counted towards the deletion's settled chains (ended, no page open). */
  settled: boolean;
}

/** A page whose keys were listed but whose deletion is not yet recorded. */
export interface PageRecord {
  chainId: string;
  round: number;
  page: number;
  startAfter?: string;
  lastKey: string;
  count: number;
  bytes: number;
  /** Versioned buckets: a page of one key's versions that continue on the next page. */
  partial?: boolean;
  /** The versions of a partial page, so that a resumed page deletes only its own. */
  versionIds?: string[];
}

export interface KeyFailure {
  key: string;
  code: string;
  message: string;
  /** In a versioned bucket, the version that could not be deleted. */
  versionId?: string;
}

export interface StreamView {
  tenant: string;
  stream: string;
  state: Exclude<StreamState, 'DELETED'>;
  generation: number;
  location: string;
  createdAt: string;
  deletionId?: string;
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
  requestedAt: string;
  completedAt?: string;
  attempts: number;
  /** Keys that could not be deleted, or a key-less reason (a stalled deletion). */
  failures?: Array<{ key?: string; versionId?: string; code: string; message: string }>;
  failedObjects?: number;
}

const location = (bucket: string, prefix: string) => `s3://${bucket}/${prefix}`;

export function toStreamView(record: StreamRecord): StreamView {
  if (record.state === 'DELETED') throw new Error('a DELETED stream has no view');
  return {
    tenant: record.tenant,
    stream: record.stream,
    state: record.state,
    generation: record.generation,
    location: location(record.bucket, record.prefix),
    createdAt: record.createdAt,
    ...(record.deletionId ? { deletionId: record.deletionId } : {}),
  };
}

export function toReceipt(record: DeletionRecord, failures: KeyFailure[] = []): DeletionReceipt {
  const failed = failures.length > 0 || record.reason !== undefined || record.failedObjects > 0;
  const reasons = record.reason ? [record.reason] : [];
  return {
    deletionId: record.deletionId,
    tenant: record.tenant,
    stream: record.stream,
    generation: record.generation,
    location: location(record.bucket, record.prefix),
    state: record.state,
    objectsDeleted: record.objectsDeleted,
    bytesDeleted: record.bytesDeleted,
    requestedAt: record.requestedAt,
    ...(record.completedAt ? { completedAt: record.completedAt } : {}),
    attempts: record.attempts,
    ...(failed ? { failures: [...reasons, ...failures], failedObjects: record.failedObjects } : {}),
  };
}
