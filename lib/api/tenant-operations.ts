import {
  hasOffboardingEnded,
  OffboardingNotCancellableError,
  OffboardingNotFoundError,
  TenantNotFoundError,
} from '../core/index.ts';
import type { OffboardingStore, StreamStore } from '../store/index.ts';
import { graceOf, type Operations, tenantOf } from './request.ts';

export interface TenantOperationsOptions {
  readonly streams: Pick<StreamStore, 'list'>;
  readonly offboardings: Pick<OffboardingStore, 'request' | 'get' | 'cancel'>;
  /** The offboarding's view and the synchronous part of its cancel (see lib/pipeline). */
  readonly offboarder: {
    view(tenant: string): Promise<unknown>;
    refresh(offboarding: Awaited<ReturnType<OffboardingStore['get']>> & object): Promise<unknown>;
  };
  readonly defaultGraceSeconds: number;
}

/** Whole tenants: offboard one in a call, follow it, take it back within its grace window. */
export function tenantOperations(options: TenantOperationsOptions) {
  const { streams, offboardings, offboarder, defaultGraceSeconds } = options;
  const location = (tenant: string) => ({ Location: `/v1/tenants/${tenant}/offboarding` });
  return {
    deleteTenant: async (request) => {
      const tenant = tenantOf(request);
      const grace = graceOf(request, defaultGraceSeconds);
      const current = await offboardings.get(tenant);
      if (!current || hasOffboardingEnded(current.state)) {
        if (!(await hasStreams(streams, tenant))) throw new TenantNotFoundError(tenant);
        await offboardings.request(tenant, grace);
      }
      return { status: 202, body: await offboarder.view(tenant), headers: location(tenant) };
    },

    getOffboarding: async (request) => ({
      status: 200,
      body: await offboarder.view(tenantOf(request)),
    }),

    cancelOffboarding: async (request) => {
      const tenant = tenantOf(request);
      const cancelled = await offboardings.cancel(tenant);
      if (!cancelled) {
        const current = await offboardings.get(tenant);
        if (!current) throw new OffboardingNotFoundError(tenant);
        const why =
          current.state === 'RUNNING'
            ? `its grace window ended at ${current.executeAfter}`
            : `it is ${current.state}`;
        throw new OffboardingNotCancellableError(tenant, why);
      }
      // Its stream deletions are cancelled now; the sweeper finishes any a late step adds, and
      // any whose cancel failed here (it begins none of the tenant's due deletions until then).
      // The offboarding is cancelled either way: that is the answer.
      await offboarder.refresh(cancelled).catch(() => undefined);
      return { status: 200, body: await offboarder.view(tenant) };
    },
  } satisfies Operations<string>;
}

/** Whether the tenant has a stream that is not DELETED (pages through deleted ones). */
async function hasStreams(streams: TenantOperationsOptions['streams'], tenant: string) {
  let token: string | undefined;
  do {
    const page = await streams.list(tenant, 25, token);
    if (page.streams.length > 0) return true;
    token = page.nextToken;
  } while (token);
  return false;
}
