import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { TransientPageError } from './errors.ts';
import type { KeyFailure } from './model.ts';
import type { ListedObject } from './pager.ts';
import { backoff, sleep } from './table.ts';

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
  /** Rounds of DeleteObjects for keys that keep failing transiently. Default 6. */
  readonly maxAttempts?: number;
  /** Base of the exponential backoff between rounds, in milliseconds. Default 100. */
  readonly backoffMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface PageResult {
  objects: number;
  bytes: number;
  /** Keys that cannot be deleted (AccessDenied, Object Lock): reported, not retried. */
  failures: KeyFailure[];
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
    this.#maxAttempts = options.maxAttempts ?? 6;
    this.#backoffMs = options.backoffMs ?? 100;
    this.#sleep = options.sleep ?? sleep;
  }

  async deletePage(bucket: string, objects: ListedObject[]): Promise<PageResult> {
    const sizes = new Map(objects.map((object) => [object.key, object.size]));
    const failures: KeyFailure[] = [];
    let pending = objects.map((object) => object.key);
    let retriedKeys = 0;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= this.#maxAttempts) {
        throw new TransientPageError(
          `${pending.length} keys still failing after ${attempt} attempts, e.g. ${pending[0]}`,
        );
      }
      if (attempt > 0) {
        retriedKeys += pending.length;
        await this.#sleep(backoff(attempt, this.#backoffMs, 5_000));
      }
      const { Errors = [] } = await this.#client.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: pending.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const retry: string[] = [];
      for (const error of Errors) {
        const key = error.Key ?? '';
        if (!sizes.has(key)) continue;
        if (isTransientCode(error.Code)) retry.push(key);
        else failures.push({ key, code: error.Code ?? 'Unknown', message: error.Message ?? '' });
      }
      pending = retry;
    }
    const failedBytes = failures.reduce((sum, failure) => sum + (sizes.get(failure.key) ?? 0), 0);
    const totalBytes = objects.reduce((sum, object) => sum + object.size, 0);
    return {
      objects: objects.length - failures.length,
      bytes: totalBytes - failedBytes,
      failures,
      failedBytes,
      retriedKeys,
    };
  }
}
