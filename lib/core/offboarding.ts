import { LetheError } from './errors.ts';
import type { DeletionState } from './lifecycle.ts';
import type { DeletionRecord } from './records.ts';

/**
 * A tenant's offboarding: every stream of the tenant gets a deletion (one page of streams per
 * step, each step a write of its own), creating a stream under it is refused until it ends,
 * and it is COMPLETED only when every one of those deletions is.
 */

export const OFFBOARDING_STATES = ['RUNNING', 'COMPLETED', 'CANCELLED'] as const;
export type OffboardingState = (typeof OFFBOARDING_STATES)[number];

/** States in which a tenant's names are free again. */
export const ENDED_OFFBOARDING_STATES = ['COMPLETED', 'CANCELLED'] as const;

export const OFFBOARDING_TRANSITIONS = {
  request: { from: ENDED_OFFBOARDING_STATES, to: 'RUNNING' },
  complete: { from: ['RUNNING'], to: 'COMPLETED' },
  cancel: { from: ['RUNNING'], to: 'CANCELLED' },
} as const;

export interface OffboardingRecord {
  type: 'OFFBOARDING';
  tenant: string;
  offboardingId: string;
  state: OffboardingState;
  requestedAt: string;
  /** When the stream deletions may start: the end of the grace window. */
  executeAfter: string;
  updatedAt: string;
  /** Grows by one with every write of the item (the table counts it): a change's place. */
  sequence?: number;
  /** The last stream name the fan-out has taken in; absent before the first page. */
  fanoutAfter?: string;
  /** Every stream of the tenant has its deletion. */
  fannedOut: boolean;
  /** Streams taken in, each with its deletion. */
  streams: number;
  /** Written when it ends: the sums of its deletions' receipts. */
  objectsDeleted?: number;
  bytesDeleted?: number;
  completedAt?: string;
  cancelledAt?: string;
}

/** One stream an offboarding took in, and the deletion that takes it. */
export interface OffboardingLink {
  offboardingId: string;
  tenant: string;
  stream: string;
  deletionId: string;
  /**
   * The deletion was requested before the offboarding took the stream in (by the tenant, say):
   * the offboarding waits for it but does not own it, so cancelling the offboarding leaves it.
   */
  adopted?: true;
  /**
   * Counted (`countCompleted`): its deletion COMPLETED. The stream is done even once that
   * deletion's receipt has expired.
   */
  completed?: true;
}

export interface OffboardingView {
  tenant: string;
  offboardingId: string;
  /** SCHEDULED while the grace window lasts (its deletions wait), then RUNNING. */
  state: OffboardingState | 'SCHEDULED';
  deletions: string[];
  streams: number;
  /** Deletions of its streams by state, so a stalled or failed one shows. */
  deletionStates: Partial<Record<DeletionState, number>>;
  objectsDeleted: number;
  bytesDeleted: number;
  requestedAt: string;
  executeAfter: string;
  completedAt?: string;
  cancelledAt?: string;
}

/**
 * What the offboarding's own item tells of it, an event's detail: its view less what only its
 * deletions' records hold (their ids and states, and the summed counts until it COMPLETED).
 */
export type OffboardingItemView = Omit<
  OffboardingView,
  'deletions' | 'deletionStates' | 'objectsDeleted' | 'bytesDeleted'
> &
  Partial<Pick<OffboardingView, 'objectsDeleted' | 'bytesDeleted'>>;

/** Its state as the API answers it at `at`: SCHEDULED while RUNNING within its grace window. */
export const offboardingStateAt = (
  record: Pick<OffboardingRecord, 'state' | 'executeAfter'>,
  at: Date,
): OffboardingView['state'] =>
  record.state === 'RUNNING' && Date.parse(record.executeAfter) > at.getTime()
    ? 'SCHEDULED'
    : record.state;

/**
 * The offboarding as the API answers it at `at`: with its deletions, the view; without them,
 * what its item alone holds of it.
 */
export function toOffboardingView(
  record: OffboardingRecord,
  at: Date,
  deletions: readonly DeletionRecord[],
): OffboardingView;
export function toOffboardingView(record: OffboardingRecord, at: Date): OffboardingItemView;
export function toOffboardingView(
  record: OffboardingRecord,
  at: Date,
  deletions?: readonly DeletionRecord[],
): OffboardingView | OffboardingItemView {
  const states: Partial<Record<DeletionState, number>> = {};
  for (const deletion of deletions ?? []) {
    states[deletion.state] = (states[deletion.state] ?? 0) + 1;
  }
  const sum = (field: 'objectsDeleted' | 'bytesDeleted') =>
    record[field] ?? deletions?.reduce((total, deletion) => total + deletion[field], 0);
  const objectsDeleted = sum('objectsDeleted');
  const bytesDeleted = sum('bytesDeleted');
  return {
    tenant: record.tenant,
    offboardingId: record.offboardingId,
    state: offboardingStateAt(record, at),
    ...(deletions ? { deletions: deletions.map((deletion) => deletion.deletionId) } : {}),
    streams: record.streams,
    ...(deletions ? { deletionStates: states } : {}),
    ...(objectsDeleted !== undefined ? { objectsDeleted } : {}),
    ...(bytesDeleted !== undefined ? { bytesDeleted } : {}),
    requestedAt: record.requestedAt,
    executeAfter: record.executeAfter,
    ...(record.completedAt ? { completedAt: record.completedAt } : {}),
    ...(record.cancelledAt ? { cancelledAt: record.cancelledAt } : {}),
  };
}

export const hasOffboardingEnded = (state: OffboardingState) =>
  (ENDED_OFFBOARDING_STATES as readonly string[]).includes(state);

export class TenantNotFoundError extends LetheError {
  readonly code = 'TenantNotFound';
  readonly status = 404;
  override readonly name = 'TenantNotFoundError';
  constructor(tenant: string) {
    super(`tenant ${tenant} has no streams`);
  }
}

export class OffboardingNotFoundError extends LetheError {
  readonly code = 'OffboardingNotFound';
  readonly status = 404;
  override readonly name = 'OffboardingNotFoundError';
  constructor(tenant: string) {
    super(`tenant ${tenant} has no offboarding`);
  }
}

export class TenantDeletingError extends LetheError {
  readonly code = 'TenantDeleting';
  readonly status = 409;
  override readonly name = 'TenantDeletingError';
  constructor(tenant: string, offboardingId: string | undefined) {
    super(
      `tenant ${tenant} is being offboarded${offboardingId ? ` (offboarding ${offboardingId})` : ''}: no stream can be created under it until that ends`,
    );
    this.headers['Retry-After'] = '60';
  }
}

export class OffboardingNotCancellableError extends LetheError {
  readonly code = 'OffboardingNotCancellable';
  readonly status = 409;
  override readonly name = 'OffboardingNotCancellableError';
  constructor(tenant: string, why: string) {
    super(`the offboarding of tenant ${tenant} cannot be cancelled: ${why}`);
  }
}
