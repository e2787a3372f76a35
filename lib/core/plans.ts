import { z } from 'zod';
import { InvalidMessageError, LetheError } from './errors.ts';
import { CHAIN_ID_PATTERN, NAME_PATTERN, s3Uri } from './names.ts';
import { deletionLayoutOf, type Estimate, estimateDeletion } from './pricing.ts';
import type { Cursor } from './ranges.ts';
import type { ListedObject, StreamRecord } from './records.ts';

/**
 * Plans: a dry run of a deletion. A plan lists its stream's location through the same fan-out
 * (one chain per child prefix, one page per message) and counts what a deletion would take;
 * it never deletes or aborts anything and never changes the stream.
 */

export const PLAN_STATES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED'] as const;
export type PlanState = (typeof PLAN_STATES)[number];

/** A plan's steps, and the states each may be taken from (its store's conditions say so). */
export const PLAN_TRANSITIONS = {
  start: { from: ['PENDING'], to: 'RUNNING' },
  complete: { from: ['RUNNING'], to: 'COMPLETED' },
  fail: { from: ['PENDING', 'RUNNING'], to: 'FAILED' },
} as const satisfies Record<string, { from: readonly PlanState[]; to: PlanState }>;

/** What a plan counts, in every chain and in total. */
export interface PlanCounts {
  /** Current objects (in a versioned bucket: keys whose latest version is not a delete marker). */
  objects: number;
  /** Bytes of every version (of every object, unversioned): what the deletion frees. */
  bytes: number;
  /** Object versions the deletion would delete (every object, unversioned): its `objectsDeleted`. */
  versions: number;
  deleteMarkers: number;
  /**
   * Listing pages of the configured page size, a chain per child prefix: the deletion's pages
   * where children fill pages, more than its where they are small (see deletionLayoutOf).
   */
  pages: number;
}

export const NO_COUNTS: PlanCounts = {
  objects: 0,
  bytes: 0,
  versions: 0,
  deleteMarkers: 0,
  pages: 0,
};

export interface PlanRecord extends PlanCounts {
  type: 'PLAN';
  planId: string;
  tenant: string;
  stream: string;
  generation: number;
  bucket: string;
  prefix: string;
  state: PlanState;
  versioned?: boolean;
  chainsTotal: number;
  chainsSettled: number;
  multipartUploads: number;
  /** What the estimate assumes of the deployment, fixed when the plan is requested. */
  pageSize: number;
  workerConcurrency: number;
  /** The bucket's key budget when the plan was requested (absent: none). */
  maxKeysPerSecond?: number;
  requestedAt: string;
  updatedAt: string;
  completedAt?: string;
  reason?: { code: string; message: string };
  /** Pages its chains had counted when the sweeper last looked at it, and looks since with none more. */
  pagesSeen?: number;
  stalls?: number;
}

/** One chain of a plan: its prefix listed page by page, each page counted once. */
export interface PlanChainRecord extends PlanCounts {
  planId: string;
  tenant: string;
  chainId: string;
  prefix: string;
  /** The next page to list; a message for any other page is a duplicate. */
  page: number;
  cursor?: Cursor;
  ended: boolean;
}

export interface PlanView extends Omit<PlanCounts, 'pages'> {
  planId: string;
  tenant: string;
  stream: string;
  generation: number;
  location: string;
  state: PlanState;
  multipartUploads: number;
  estimate: Estimate;
  requestedAt: string;
  completedAt?: string;
  failure?: { code: string; message: string };
}

/** A new plan of the incarnation `stream` stands for, nothing counted yet. */
export function newPlan(
  stream: StreamRecord,
  planId: string,
  now: Date,
  assumptions: { pageSize: number; workerConcurrency: number; maxKeysPerSecond?: number },
): PlanRecord {
  const { maxKeysPerSecond, ...deployment } = assumptions;
  return {
    type: 'PLAN',
    planId,
    tenant: stream.tenant,
    stream: stream.stream,
    generation: stream.generation,
    bucket: stream.bucket,
    prefix: stream.prefix,
    state: 'PENDING',
    chainsTotal: 0,
    chainsSettled: 0,
    ...NO_COUNTS,
    multipartUploads: 0,
    ...deployment,
    ...(maxKeysPerSecond ? { maxKeysPerSecond } : {}),
    requestedAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

/** What one listed page adds to its chain's counts. */
export function countPage(entries: readonly ListedObject[], versioned: boolean): PlanCounts {
  const counts = { ...NO_COUNTS, pages: 1 };
  for (const entry of entries) {
    if (entry.marker) {
      counts.deleteMarkers++;
      continue;
    }
    counts.versions++;
    counts.bytes += entry.size;
    if (!versioned || entry.latest === true) counts.objects++;
  }
  return counts;
}

export function addCounts(a: PlanCounts, b: PlanCounts): PlanCounts {
  return {
    objects: a.objects + b.objects,
    bytes: a.bytes + b.bytes,
    versions: a.versions + b.versions,
    deleteMarkers: a.deleteMarkers + b.deleteMarkers,
    pages: a.pages + b.pages,
  };
}

/** The plan as the API answers it, with the estimate of the deletion it previews. */
export function toPlanView(plan: PlanRecord, totals: PlanCounts = plan): PlanView {
  const entries = totals.versions + totals.deleteMarkers;
  return {
    planId: plan.planId,
    tenant: plan.tenant,
    stream: plan.stream,
    generation: plan.generation,
    location: s3Uri(plan.bucket, plan.prefix),
    state: plan.state,
    objects: totals.objects,
    bytes: totals.bytes,
    versions: totals.versions,
    deleteMarkers: totals.deleteMarkers,
    multipartUploads: plan.multipartUploads,
    estimate: estimateDeletion({
      entries,
      ...deletionLayoutOf(
        { pages: totals.pages, chains: plan.chainsTotal, entries },
        plan.pageSize,
      ),
      multipartUploads: plan.multipartUploads,
      workerConcurrency: plan.workerConcurrency,
      ...(plan.maxKeysPerSecond ? { maxKeysPerSecond: plan.maxKeysPerSecond } : {}),
    }),
    requestedAt: plan.requestedAt,
    ...(plan.completedAt ? { completedAt: plan.completedAt } : {}),
    ...(plan.reason ? { failure: plan.reason } : {}),
  };
}

export class PlanNotFoundError extends LetheError {
  readonly code = 'PlanNotFound';
  readonly status = 404;
  override readonly name = 'PlanNotFoundError';
  constructor(tenant: string, planId: string) {
    super(`plan ${planId} does not exist for tenant ${tenant}`);
  }
}

/** One page of one chain of a plan: the only message of the plan queue. */
export const PlanPageMessage = z.strictObject({
  v: z.literal(1),
  type: z.literal('plan-page'),
  tenant: z.string().regex(NAME_PATTERN),
  planId: z.uuid(),
  chainId: z.string().regex(CHAIN_ID_PATTERN),
  page: z.int().min(0),
});
export type PlanPageMessage = z.infer<typeof PlanPageMessage>;

export const planPageMessage = (
  chain: Pick<PlanChainRecord, 'tenant' | 'planId' | 'chainId'>,
  page: number,
): PlanPageMessage => ({
  v: 1,
  type: 'plan-page',
  tenant: chain.tenant,
  planId: chain.planId,
  chainId: chain.chainId,
  page,
});

export function parsePlanMessage(body: string): PlanPageMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidMessageError('plan message is not JSON');
  }
  const result = PlanPageMessage.safeParse(json);
  if (!result.success) {
    throw new InvalidMessageError(`invalid plan message: ${z.prettifyError(result.error)}`);
  }
  return result.data;
}
