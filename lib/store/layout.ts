import { createHash } from 'node:crypto';

/**
 * The table's layout: one table, items keyed by `pk`/`sk`, and a sparse index of open
 * deletions. Only the stores (and the stack, which declares the index) read this file.
 */

/** Name of the sparse index of open deletions, keyed by their last progress. */
export const SWEEP_INDEX = 'sweep';

/** Partitions of the sweep index: open deletions by last progress, scheduled ones by start. */
export const OPEN_DELETIONS = 'OPEN';
export const SCHEDULED_DELETIONS = 'SCHEDULED';
/** The sweep index's partition of offboardings under way. */
export const RUNNING_OFFBOARDINGS = 'OFFBOARDINGS';
/** The sweep index's partition of streams with a retention policy. */
export const RETENTION_POLICIES = 'RETENTION';
/** The sweep index's partition of plans not yet ended, by when they were last looked at. */
export const OPEN_PLANS = 'PLANS';

/**
 * The table's partitions by what they hold, as IAM `dynamodb:LeadingKeys` patterns: every key
 * of `keys` starts with one of them. The stack grants each function writes to those it writes.
 */
export const PARTITIONS = {
  /** A tenant's streams, deletions (receipts) and offboarding. */
  tenants: 'TENANT#*',
  /** A deletion's own items: its chains, key failures and uploads. */
  deletions: 'DELETION#*',
  /** An offboarding's links to its streams, and its count of those completed. */
  offboardings: 'OFFBOARDING#*',
  /** A plan and its chains. */
  plans: 'PLAN#*',
  /** A bucket's key budget. */
  budgets: 'BUDGET#*',
  /** The public keys that signed certificates. */
  certificateKeys: 'CERTIFICATE_KEY#*',
} as const;

/** The partitions of plans and their chains, as an IAM `dynamodb:LeadingKeys` pattern. */
export const PLAN_PARTITIONS = PARTITIONS.plans;

/** Name of the index of a tenant's deletions, newest first (`listPk`, `listSk`). */
export const LIST_INDEX = 'byTenant';

/** The attribute DynamoDB's TTL reads (epoch seconds). */
export const TTL_ATTRIBUTE = 'expiresAt';

/**
 * Every item's count of the writes it took: 1 when put, one more with each update (Table adds
 * it to every write), so an item's stream records, and the events made of them, can be told in
 * order and a replayed one from news.
 */
export const SEQUENCE_ATTRIBUTE = 'sequence';

/** DynamoDB's limits on a partition key's value and on a sort key's. */
export const MAX_PARTITION_KEY_BYTES = 2048;
export const MAX_SORT_KEY_BYTES = 1024;

/**
 * A sort key of `prefix` and `tail` (an S3 key, which may be 1,024 bytes alone): as it is when
 * it fits a sort key, else `prefix` and the tail's SHA-256, the same for the same tail. The item
 * holds the tail whole in an attribute of its own.
 */
export function sortKeyOf(prefix: string, tail: string): string {
  const sortKey = `${prefix}${tail}`;
  if (Buffer.byteLength(sortKey) <= MAX_SORT_KEY_BYTES) return sortKey;
  return `${prefix}sha256:${createHash('sha256').update(tail).digest('hex')}`;
}

export interface ItemKey {
  pk: string;
  sk: string;
}

export const keys = {
  stream: (tenant: string, stream: string): ItemKey => ({
    pk: `TENANT#${tenant}`,
    sk: `STREAM#${stream}`,
  }),
  streamsOf: (tenant: string) => ({ pk: `TENANT#${tenant}`, skPrefix: 'STREAM#' }),
  deletion: (tenant: string, deletionId: string): ItemKey => ({
    pk: `TENANT#${tenant}`,
    sk: `DELETION#${deletionId}`,
  }),
  chain: (deletionId: string, round: number, chainId: string): ItemKey => ({
    pk: `DELETION#${deletionId}`,
    sk: `CHAIN#${round}#${chainId}`,
  }),
  /** The partition of a deletion's own items: its chains, key failures and uploads. */
  itemsOf: (deletionId: string) => ({ pk: `DELETION#${deletionId}` }),
  /** Every chain of every round when `round` is absent. */
  chainsOf: (deletionId: string, round?: number) => ({
    pk: `DELETION#${deletionId}`,
    skPrefix: round === undefined ? 'CHAIN#' : `CHAIN#${round}#`,
  }),
  failure: (deletionId: string, round: number, key: string): ItemKey => ({
    pk: `DELETION#${deletionId}`,
    sk: sortKeyOf(`FAILURE#${round}#`, key),
  }),
  /** The list index's keys of a deletion: its tenant, and when it was requested. */
  listed: (deletion: { tenant: string; deletionId: string; requestedAt: string }) => ({
    listPk: `TENANT#${deletion.tenant}`,
    listSk: `${deletion.requestedAt}#${deletion.deletionId}`,
  }),
  upload: (deletionId: string, key: string, uploadId: string): ItemKey => ({
    pk: `DELETION#${deletionId}`,
    sk: sortKeyOf('UPLOAD#', `${uploadId}#${key}`),
  }),
  offboarding: (tenant: string): ItemKey => ({ pk: `TENANT#${tenant}`, sk: 'OFFBOARDING' }),
  offboardingLink: (offboardingId: string, stream: string): ItemKey => ({
    pk: `OFFBOARDING#${offboardingId}`,
    sk: `STREAM#${stream}`,
  }),
  /** How many of an offboarding's deletions have completed (an item apart from the offboarding's). */
  offboardingCompleted: (offboardingId: string): ItemKey => ({
    pk: `OFFBOARDING#${offboardingId}`,
    sk: 'COMPLETED',
  }),
  offboardingLinksOf: (offboardingId: string) => ({
    pk: `OFFBOARDING#${offboardingId}`,
    skPrefix: 'STREAM#',
  }),
  /**
   * A plan and its chains share a partition of their own (`PLAN#`), apart from the tenant's
   * streams and deletions: the planner's role may touch only partitions that start so.
   */
  plan: (planId: string): ItemKey => ({ pk: `PLAN#${planId}`, sk: 'PLAN' }),
  planChain: (planId: string, chainId: string): ItemKey => ({
    pk: `PLAN#${planId}`,
    sk: `CHAIN#${chainId}`,
  }),
  planChainsOf: (planId: string) => ({ pk: `PLAN#${planId}`, skPrefix: 'CHAIN#' }),
  /** A public key that signed certificates, kept for as long as they may be verified. */
  /** The key budget of a bucket (`LETHE_MAX_KEYS_PER_SECOND`), shared by every worker. */
  keyBudget: (bucket: string): ItemKey => ({ pk: `BUDGET#${bucket}`, sk: 'BUDGET' }),
  certificateKey: (keyId: string): ItemKey => ({ pk: `CERTIFICATE_KEY#${keyId}`, sk: 'KEY' }),
  uploadsOf: (deletionId: string) => ({ pk: `DELETION#${deletionId}`, skPrefix: 'UPLOAD#' }),
  failuresOf: (deletionId: string, round: number) => ({
    pk: `DELETION#${deletionId}`,
    skPrefix: `FAILURE#${round}#`,
  }),
};

/** Strips the table's own attributes from an item read back, leaving the domain record. */
export function recordOf<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const {
    pk: _pk,
    sk: _sk,
    sweepPk: _sweepPk,
    sweepSk: _sweepSk,
    listPk: _listPk,
    listSk: _listSk,
    // The table's own count of writes: the publisher reads it from stream images, no store does.
    sequence: _sequence,
    ...record
  } = item;
  return record as T;
}
