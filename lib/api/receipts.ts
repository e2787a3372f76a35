import {
  DeletionNotFoundError,
  type DeletionReceipt,
  type DeletionRecord,
  hasEnded,
  toReceipt,
} from '../core/index.ts';
import type { ChainStore, DeletionStore, FailureStore, UploadStore } from '../store/index.ts';

export interface ReceiptsOptions {
  readonly deletions: Pick<DeletionStore, 'get'>;
  readonly chains: Pick<ChainStore, 'totals'>;
  readonly failures: Pick<FailureStore, 'list'>;
  readonly uploads: Pick<UploadStore, 'count'>;
}

/**
 * Receipts as the API answers them: a deletion's record with its exact totals (the sum of its
 * chains while it runs; written on the record once it ends) and the keys that failed.
 */
export class Receipts {
  readonly #deletions: ReceiptsOptions['deletions'];
  readonly #chains: ReceiptsOptions['chains'];
  readonly #failures: ReceiptsOptions['failures'];
  readonly #uploads: ReceiptsOptions['uploads'];

  constructor(options: ReceiptsOptions) {
    this.#uploads = options.uploads;
    this.#deletions = options.deletions;
    this.#chains = options.chains;
    this.#failures = options.failures;
  }

  async get(tenant: string, deletionId: string): Promise<DeletionReceipt> {
    const deletion = await this.#deletions.get(tenant, deletionId);
    if (!deletion) throw new DeletionNotFoundError(tenant, deletionId);
    return this.of(deletion);
  }

  async of(deletion: DeletionRecord): Promise<DeletionReceipt> {
    // An ended deletion holds its own totals; while it runs, its chains do.
    const totals = hasEnded(deletion.state)
      ? deletion
      : {
          ...(await this.#chains.totals(deletion)),
          multipartUploadsAborted: await this.#uploads.count(deletion),
        };
    return toReceipt(deletion, totals, await this.#failures.list({ ...deletion, ...totals }));
  }
}
