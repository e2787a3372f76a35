import type { DeletionRecord, DeletionRef } from '../core/index.ts';
import { exists } from './conditions.ts';
import { keys } from './layout.ts';
import type { Table } from './table.ts';

/**
 * The multipart uploads a deletion aborted: one item per upload, written before the abort and
 * marked `aborted` once an abort succeeded, so a repeated finalize records each once and the
 * receipt counts exactly those it aborted (not one that completed before its abort). The
 * deletion is marked (`uploadsRecorded`) before the first is written, so a deletion that never
 * met an upload, nearly every one, is counted without a query.
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
    // Written, not put: a verification at once may have marked the upload aborted already.
    await Promise.all(
      uploads.map((upload) =>
        this.#table.update(keys.upload(deletion.deletionId, upload.key, upload.uploadId), {
          update: 'SET #key = :key, uploadId = :uploadId',
          names: { '#key': 'key' },
          values: { ':key': upload.key, ':uploadId': upload.uploadId },
        }),
      ),
    );
  }

  /** Marks the recorded uploads this verification aborted (each counted from then on). */
  async aborted(
    deletion: Pick<DeletionRef, 'deletionId'>,
    uploads: Array<{ key: string; uploadId: string }>,
  ) {
    await Promise.all(
      uploads.map((upload) =>
        this.#table.update(keys.upload(deletion.deletionId, upload.key, upload.uploadId), {
          update: 'SET aborted = :true',
          values: { ':true': true },
          condition: exists,
        }),
      ),
    );
  }

  /** The uploads recorded for the deletion; none, without a query, if it was never marked. */
  async count(deletion: Pick<DeletionRecord, 'deletionId' | 'uploadsRecorded'>): Promise<number> {
    if (!deletion.uploadsRecorded) return 0;
    const scope = keys.uploadsOf(deletion.deletionId);
    return this.#table.count({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :uploads)',
      FilterExpression: 'aborted = :true',
      ExpressionAttributeValues: { ':pk': scope.pk, ':uploads': scope.skPrefix, ':true': true },
      ConsistentRead: true,
    });
  }
}
