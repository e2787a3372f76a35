import type { DeletionRecord, DeletionRef } from '../core/index.ts';
import { exists } from './conditions.ts';
import { keys } from './layout.ts';
import type { Table } from './table.ts';

/**
 * The multipart uploads a deletion aborted: one item per upload, written before the abort, so
 * a repeated finalize records each once and the receipt counts them exactly. The deletion is
 * marked (`uploadsRecorded`) before the first is written, so a deletion that never met an
 * upload, nearly every one, is counted without a query.
 */
export class UploadStore {
  readonly #table: Table;

  constructor(options: { readonly table: Table }) {
    this.#table = options.table;
  }

  async record(
    deletion: Pick<DeletionRef, 'tenant' | 'deletionId'>,
    uploads: Array<{ key: string; uploadId: string }>,
  ) {
    if (uploads.length === 0) return;
    await this.#table.update(keys.deletion(deletion.tenant, deletion.deletionId), {
      update: 'SET uploadsRecorded = :true',
      values: { ':true': true },
      condition: exists,
    });
    await this.#table.putAll(
      uploads.map((upload) => ({
        ...keys.upload(deletion.deletionId, upload.key, upload.uploadId),
        ...upload,
      })),
    );
  }

  /** The uploads recorded for the deletion; none, without a query, if it was never marked. */
  async count(deletion: Pick<DeletionRecord, 'deletionId' | 'uploadsRecorded'>): Promise<number> {
    if (!deletion.uploadsRecorded) return 0;
    const scope = keys.uploadsOf(deletion.deletionId);
    return this.#table.count({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :uploads)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':uploads': scope.skPrefix },
      ConsistentRead: true,
    });
  }
}
