import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { type KeyFailure, type ListedObject, TransientPageError } from '../core/index.ts';
import { backoff, RETRY, sleep } from '../support/index.ts';

/** Per-key codes that pass with time: the key is tried again, never reported as a failure. */
const TRANSIENT_CODES = new Set([
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'OperationAborted',
  'Throttling',
  'ThrottlingException',
]);

export const isTransientCode = (code: string | undefined) =>
  code === undefined || TRANSIENT_CODES.has(code);

export interface PageDeleterOptions {
  readonly client: S3Client;
  /** Rounds of DeleteObjects for keys that keep failing transiently. @default RETRY.throttling */
  readonly maxAttempts?: number;
  /** Base of the exponential backoff between rounds, in milliseconds. @default RETRY.throttling */
  readonly backoffMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface PageResult {
  objects: number;
  bytes: number;
  /** Keys that cannot be deleted (AccessDenied, Object Lock): reported, not retried. */
  failures: KeyFailure[];
  /** Objects among the failures (delete markers that failed are not objects). */
  failedObjects: number;
  failedBytes: number;
  /** Keys retried after a transient per-key error. */
  retriedKeys: number;
}

/**
 * Deletes one page with one DeleteObjects. DeleteObjects answers 200 even when keys fail:
 * its per-key `Errors` are failures, never successes. Transient ones are retried with backoff
 * and jitter; if they outlast the retries the page throws, so the message is redelivered.
 */
export class PageDeleter {
  readonly #client: S3Client;
  readonly #maxAttempts: number;
  readonly #backoffMs: number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: PageDeleterOptions) {
    this.#client = options.client;
    this.#maxAttempts = options.maxAttempts ?? RETRY.throttling.attempts;
    this.#backoffMs = options.backoffMs ?? RETRY.throttling.baseMs;
    this.#sleep = options.sleep ?? sleep;
  }

  async deletePage(bucket: string, objects: ListedObject[]): Promise<PageResult> {
    const byId = new Map(objects.map((object) => [idOf(object.key, object.versionId), object]));
    const failed: ListedObject[] = [];
    const failures: KeyFailure[] = [];
    let pending = objects;
    let retriedKeys = 0;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= this.#maxAttempts) {
        throw new TransientPageError(
          `${pending.length} keys still failing after ${attempt} attempts, e.g. ${pending[0]?.key}`,
        );
      }
      if (attempt > 0) {
        retriedKeys += pending.length;
        await this.#sleep(backoff(attempt, this.#backoffMs, RETRY.throttling.capMs));
      }
      const { Errors = [] } = await this.#client.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: {
            Objects: pending.map(({ key, versionId }) => ({
              Key: key,
              ...(versionId ? { VersionId: versionId } : {}),
            })),
            Quiet: true,
          },
        }),
      );
      const retry: ListedObject[] = [];
      for (const error of Errors) {
        // S3 names the version of an error when the request named one; an error that does not
        // counts for every version of that key in the request. Never a success.
        const exact = byId.get(idOf(error.Key ?? '', error.VersionId));
        const objects = exact ? [exact] : pending.filter((object) => object.key === error.Key);
        if (objects.length === 0) {
          throw new Error(
            `DeleteObjects reported an error for a key it was not given: ${error.Key}`,
          );
        }
        for (const object of objects) {
          if (isTransientCode(error.Code)) {
            retry.push(object);
          } else {
            failed.push(object);
            failures.push({
              key: object.key,
              code: error.Code ?? 'Unknown',
              message: error.Message ?? '',
              ...(object.versionId ? { versionId: object.versionId } : {}),
            });
          }
        }
      }
      pending = retry;
    }
    // Delete markers are removed like versions but are not objects of the stream.
    const counted = (list: ListedObject[]) => list.filter((object) => !object.marker);
    const failedBytes = counted(failed).reduce((sum, object) => sum + object.size, 0);
    const totalBytes = counted(objects).reduce((sum, object) => sum + object.size, 0);
    return {
      objects: counted(objects).length - counted(failed).length,
      bytes: totalBytes - failedBytes,
      failures,
      failedObjects: counted(failed).length,
      failedBytes,
      retriedKeys,
    };
  }
}

const idOf = (key: string, versionId: string | undefined) => `${key}\u0000${versionId ?? ''}`;
