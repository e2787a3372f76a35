import type { DeletionState, StreamState } from './lifecycle.ts';
import type { Cursor, KeyRange } from './ranges.ts';

/** The records Lethe keeps, as the domain sees them (the table's keys are the store's business). */

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
  /** While DELETING: when its deletion may start (so a refusal can say how long to wait). */
  executeAfter?: string;
  /**
   * The ids of ingests admitted and not yet finished (absent: none). A set, not a count: adding
   * or removing one id twice (an SDK retry after a lost answer) changes nothing, where a count
   * drifted. A writer that died leaves its id behind, which the grace then covers.
   */
  ingestsInFlight?: Set<string>;
  lastIngestAt?: string;
  /**
   * Set (to its admission) once an ingest of this incarnation ended with its write failed, which
   * S3 may still store: a deletion waits for it as for one in flight (`hasIngestInFlight`).
   */
  abandonedIngestAt?: string;
  /** Days of `dt=` partitions kept; older ones are deleted every day. */
  retentionDays?: number;
  /** The last day (UTC) a retention run was claimed: at most one a day. */
  retentionRunOn?: string;
  /** The partition deletion under way, while one is: one at a time per stream. */
  partitionDeletionId?: string;
  /** While DELETED: the deletion that completed it (an offboarding waiting on the stream asks). */
  deletedBy?: string;
}

/** What names one deletion (and its round): the fence every work message carries. */
export interface DeletionRef {
  tenant: string;
  deletionId: string;
  round: number;
}

export interface DeletionRecord extends DeletionRef {
  type: 'DELETION';
  stream: string;
  generation: number;
  bucket: string;
  prefix: string;
  state: DeletionState;
  /** Each round lists the location afresh; a round ends in verification. */
  attempts: number;
  /**
   * Resumes by the sweeper since the round last moved (a page was counted, a chain settled or
   * was added, the round was verified) or the deletion was retried; absent: none. A worker's
   * heartbeat is not progress: a worker that fails after it has one.
   */
  stalls?: number;
  /**
   * Pages the round's chains had counted at the last stale claim (`progressRound`): a claim
   * that finds more starts the stalls again. `stalledRound`: the round the Stalled verdict
   * was given in, which stands from then on.
   */
  progressSeen?: number;
  progressRound?: number;
  stalledRound?: number;
  /**
   * The round a retry left off at (the retry's own first round is the next one): a retried
   * deletion has `LETHE_MAX_ROUNDS` rounds afresh before LocationNotEmpty. Absent: never retried.
   */
  retriedAtRound?: number;
  /** When it was last retried: it has been open since then, not since its request. */
  retriedAt?: string;
  /** Totals, written when the deletion ends; while it runs, its chains hold the counts. */
  objectsDeleted: number;
  bytesDeleted: number;
  failedObjects: number;
  /** Multipart uploads in progress under the location that the deletion aborted. */
  multipartUploadsAborted?: number;
  /** Chains of the current round, and how many of them have ended with no page open. */
  chainsTotal: number;
  chainsSettled: number;
  /** The last round whose verification a worker claimed (one listing of the location per round). */
  verifiedRound?: number;
  /** The last round whose chains a dispatcher began creating one by one, not in a transaction. */
  registeredRound?: number;
  /** The call that holds that round's registration (it alone starts the round), and since when. */
  registeredBy?: string;
  registeredAt?: string;
  /**
   * The tenant offboarding that took it in, if one did: its completion is counted towards that
   * offboarding (a deletion that names none never reaches the offboarder).
   */
  offboardingId?: string;
  requestedAt: string;
  /** When the physical deletion may start: `requestedAt`, or after the grace window. */
  executeAfter: string;
  updatedAt: string;
  /** Grows by one with every write of the item (the table counts it): a change's place. */
  sequence?: number;
  completedAt?: string;
  /** When a listing of the whole location (objects, versions, uploads) last came back empty. */
  verifiedAt?: string;
  cancelledAt?: string;
  /** The bucket keeps versions: every version and delete marker is deleted, by version id. */
  versioned?: boolean;
  /** A partition deletion: only the `dt=` partitions of days strictly before this one. */
  before?: string;
  /**
   * The tombstone was written on the condition that its stream had no ingest in flight: none
   * admitted before it can still be writing, and none is admitted after it, so verification
   * need not look at the stream for one.
   */
  ingestsSettled?: true;
  /**
   * A multipart upload under the location was recorded to be aborted (set before the first
   * record is written): only then are the deletion's aborted uploads counted with a query.
   */
  uploadsRecorded?: true;
  /** Why a deletion FAILED when no single key explains it (stalled, location never empties). */
  reason?: FailureReason;
}

/**
 * A new deletion of the incarnation `stream` stands for, round 1, nothing counted: PENDING, or
 * SCHEDULED until `executeAfter` when that lies ahead.
 */
export function newDeletion(
  stream: StreamRecord,
  deletionId: string,
  now: string,
  executeAfter = now,
): DeletionRecord {
  return {
    type: 'DELETION',
    deletionId,
    tenant: stream.tenant,
    stream: stream.stream,
    generation: stream.generation,
    bucket: stream.bucket,
    prefix: stream.prefix,
    state: executeAfter > now ? 'SCHEDULED' : 'PENDING',
    round: 1,
    attempts: 1,
    objectsDeleted: 0,
    bytesDeleted: 0,
    failedObjects: 0,
    chainsTotal: 0,
    chainsSettled: 0,
    requestedAt: now,
    executeAfter,
    updatedAt: now,
  };
}

export interface FailureReason {
  code: string;
  message: string;
}

/**
 * One chain of pages: every key under `prefix`, listed in order, one page at a time. The chain
 * item carries its deletion's fence (generation, round, location) and its own progress (cursor,
 * open pages, counts), so a page reads and writes only its chain.
 */
export interface ChainRecord extends DeletionRef {
  chainId: string;
  stream: string;
  generation: number;
  bucket: string;
  /** The deletion's location: nothing outside it is ever deleted. */
  location: string;
  /** The part of the location this chain lists. */
  prefix: string;
  /**
   * The keys of `prefix` this chain lists, when it shares the prefix with other chains: a run
   * of small child prefixes (lib/pipeline/chain-layout.ts). Absent: every key of the prefix.
   */
  range?: KeyRange;
  versioned: boolean;
  /** The cutoff of a partition deletion: nothing on or after that day is ever deleted. */
  before?: string;
  /** Index of the last page listed, -1 before the first. */
  lastPage: number;
  /** Where the next page's listing starts (after this position); absent before the first. */
  cursor?: Cursor;
  ended: boolean;
  /** Pages listed whose deletion is not yet counted, by page number. */
  open: Record<string, PageRecord>;
  objectsDeleted: number;
  bytesDeleted: number;
  failedObjects: number;
  pagesDone: number;
  /** Counted towards the deletion's settled chains (ended, no page open). */
  settled: boolean;
  /**
   * Epoch milliseconds when the dispatcher registered the chain, while its deletion was starting
   * this round (lib/pipeline/fence.ts). Absent on a chain split off a running one.
   */
  registeredAt?: number;
  /** Epoch milliseconds of the chain's first listing. */
  startedAt?: number;
  /** Keys a second S3 allows this chain, learned from its SlowDown answers (lib/pipeline/pace). */
  pace?: number;
  /** The pace at which S3 last refused this chain while paced. */
  ceiling?: number;
  /** Epoch milliseconds before which a paced chain lets no further page go. */
  nextAt?: number;
  /** Epoch milliseconds of the chain's last cut in pace. */
  cutAt?: number;
  /** Epoch milliseconds when a paced chain's last admitted delete was sent. */
  sentAt?: number;
  /**
   * Stopped by a Stalled verdict (lib/pipeline/finalizer.ts): no page of it is listed, split off
   * or taken by a worker any more; the verdict closes the pages it left open.
   */
  stopped?: boolean;
}

/**
 * A page whose entries were listed but whose deletion is not yet counted. Its range is
 * everything after `after` up to and including `lastKey`; a resumed page lists that range
 * again. In a versioned bucket a key's versions may go on into the next page, so the page
 * names the versions of its last key that are its own.
 */
export interface PageRecord {
  page: number;
  after?: Cursor;
  lastKey: string;
  lastKeyVersions?: string[];
  count: number;
  bytes: number;
  /** When the page was listed (epoch ms), as its listing was recorded. */
  listedAt?: number;
}

export interface KeyFailure {
  key: string;
  code: string;
  message: string;
  /** In a versioned bucket, the version that could not be deleted. */
  versionId?: string;
}

/** Exact totals of a deletion: the sum of every chain of every round. */
export interface DeletionTotals {
  objectsDeleted: number;
  bytesDeleted: number;
  multipartUploadsAborted?: number;
  /** Keys the current round could not delete (earlier rounds' failures were tried again). */
  failedObjects: number;
}

/** An entry of a listing: an object, or in a versioned bucket one version or delete marker. */
export interface ListedObject {
  key: string;
  size: number;
  /** In a versioned bucket: the version to delete. */
  versionId?: string;
  /** In a versioned bucket: a delete marker (removed, but not an object of the stream). */
  marker?: boolean;
  /** In a versioned bucket: this is the key's current version (absent otherwise). */
  latest?: true;
  /** Its LastModified (epoch ms, to S3's second), when S3 gave it. */
  modified?: number;
  /** Its ETag, when S3 gave it: with LastModified and size, it tells one version from another. */
  etag?: string;
}

/**
 * What chains deleted, as a deletion's totals. Failures count from the chains of `round` only:
 * an earlier round's were tried again by the rounds after it.
 */
export function totalsOf(chains: Iterable<ChainRecord>, round: number): DeletionTotals {
  const totals = { objectsDeleted: 0, bytesDeleted: 0, failedObjects: 0 };
  for (const chain of chains) {
    totals.objectsDeleted += chain.objectsDeleted ?? 0;
    totals.bytesDeleted += chain.bytesDeleted ?? 0;
    if (chain.round === round) totals.failedObjects += chain.failedObjects ?? 0;
  }
  return totals;
}

/**
 * An ingest may still be writing: one in flight (DynamoDB keeps no empty set), or one whose
 * write failed, which S3 may yet store. A wait for it counts from the last admission.
 */
export const hasIngestInFlight = (
  stream: Pick<StreamRecord, 'ingestsInFlight' | 'abandonedIngestAt'>,
) => (stream.ingestsInFlight?.size ?? 0) > 0 || stream.abandonedIngestAt !== undefined;
