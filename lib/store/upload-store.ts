import type { DeletionRef } from '../core/index.ts';
import { keys } from './layout.ts';
import type { Table } from './table.ts';

/**
 * The multipart uploads a deletion aborted: one item per upload, written before the abort, so
 * a repeated finalize records each once and the receipt counts them exactly.
 */
export class UploadStore {
  readonly #table: Table;

  constructor(options: { readonly table: Table }) {
    this.#table = options.table;
  }

  async record(
    deletion: Pick<DeletionRef, 'deletionId'>,
    uploads: Array<{ key: string; uploadId: string }>,
  ) {
    await this.#table.putAll(
      uploads.map((upload) => ({
        ...keys.upload(deletion.deletionId, upload.key, upload.uploadId),
        ...upload,
      })),
    );
  }

  async count(deletion: Pick<DeletionRef, 'deletionId'>): Promise<number> {
    const scope = keys.uploadsOf(deletion.deletionId);
    return this.#table.count({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :uploads)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':uploads': scope.skPrefix },
      ConsistentRead: true,
    });
  }
}
