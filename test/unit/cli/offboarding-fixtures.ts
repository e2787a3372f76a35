import type { OffboardingView } from '../../../lib/core/index.ts';

/** Fixed values, so that a test can assert exact summaries and status lines. */
export const OFFBOARDING_ID = '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
export const REQUESTED = '2026-03-01T12:00:00.000Z';
export const EXECUTE_AFTER = '2026-03-02T12:00:00.000Z';

/** A tenant's offboarding as the API answers it: SCHEDULED, three streams taken in. */
export function anOffboarding(overrides: Partial<OffboardingView> = {}): OffboardingView {
  return {
    tenant: 'acme',
    offboardingId: OFFBOARDING_ID,
    state: 'SCHEDULED',
    deletions: [],
    streams: 3,
    deletionStates: { SCHEDULED: 3 },
    objectsDeleted: 0,
    bytesDeleted: 0,
    requestedAt: REQUESTED,
    executeAfter: EXECUTE_AFTER,
    ...overrides,
  };
}
