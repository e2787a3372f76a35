import type { DeletionReceipt } from '../core/index.ts';
import type { DeletionIndex, DeletionStore } from '../store/index.ts';
import type { Receipts } from './receipts.ts';
import {
  accepted,
  deletionIdOf,
  limitOf,
  type Operations,
  type Reply,
  stateOf,
  tenantOf,
} from './request.ts';

export interface DeletionOperationsOptions {
  readonly deletions: Pick<DeletionStore, 'retry' | 'cancel' | 'expedite'>;
  readonly index: Pick<DeletionIndex, 'list'>;
  readonly receipts: Pick<Receipts, 'get' | 'of'>;
}

const receipt = (status: number, body: DeletionReceipt): Reply => ({
  status,
  body,
  subject: { stream: body.stream, generation: body.generation },
});

/** The deletion routes: receipts, the tenant's list, and the lifecycle's requests. */
export function deletionOperations({ deletions, index, receipts }: DeletionOperationsOptions) {
  return {
    getDeletion: async (request) =>
      receipt(200, await receipts.get(tenantOf(request), deletionIdOf(request))),

    listDeletions: async (request) => {
      const tenant = tenantOf(request);
      const page = await index.list(tenant, {
        limit: limitOf(request),
        state: stateOf(request),
        nextToken: request.query.nextToken,
      });
      return {
        status: 200,
        body: {
          deletions: await Promise.all(page.deletions.map((deletion) => receipts.of(deletion))),
          ...(page.nextToken ? { nextToken: page.nextToken } : {}),
        },
      };
    },

    retryDeletion: async (request) => {
      const tenant = tenantOf(request);
      const deletion = await deletions.retry(tenant, deletionIdOf(request));
      return accepted(tenant, await receipts.of(deletion));
    },

    cancelDeletion: async (request) => {
      const deletion = await deletions.cancel(tenantOf(request), deletionIdOf(request));
      return receipt(200, await receipts.of(deletion));
    },

    expediteDeletion: async (request) => {
      const tenant = tenantOf(request);
      const deletion = await deletions.expedite(tenant, deletionIdOf(request));
      return accepted(tenant, await receipts.of(deletion));
    },
  } satisfies Operations<string>;
}
