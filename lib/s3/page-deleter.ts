import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  type DeleteObjectsCommandOutput,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import {
  type KeyFailure,
  type ListedObject,
  SlowDownError,
  TransientPageError,
} from '../core/index.ts';
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

/**
 * True when a key can travel in a DeleteObjects XML body: XML 1.0 forbids most control
 * characters (even escaped), and parsers fold line ends. Other keys go one at a time with
 * DeleteObject, which carries the key in the URL.
 */
export const fitsXml = (key: string) =>
  /^[\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u.test(key);

/** A whole request's error that passes with time (5xx, throttling, the network), not SlowDown. */
const isTransientError = (error: unknown) =>
  !(error instanceof S3ServiceException) ||
  error.$fault === 'server' ||
  TRANSIENT_CODES.has(error.name);

const isSlowDown = (error: unknown) =>
  error instanceof S3ServiceException && error.name === 'SlowDown';

export interface PageDeleterOptions {
  /**
   * The client deletes go through. Give it no retries of its own (`maxAttempts: 1`): the
   * deleter retries what passes with time, and a SlowDown must reach the chain's pace rather
   * than be retried at once (createClients' `s3Deletes`).
   */
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
  /**
   * Keys deleted without a version id that S3 answered with a delete marker (a bucket that
   * keeps versions, or whose versioning is suspended), left out of `objects`. A marker with a
   * version id of its own (versioning Enabled) hides the version, which is still there.
   */
  markersLaid: number;
  markersLaidBytes: number;
  /**
   * Those of them whose marker is the null version (versioning Suspended), or that S3 gave no
   * id: S3 removed the key's null version and laid the marker in its place, so the data listed
   * went with it only if the listed version was the null one (`countOf` reads the versions).
   */
  nullMarkers: ListedObject[];
  /** Keys retried after a transient per-key error. */
  retriedKeys: number;
}

/** What deleting each entry of a page came to. */
class Tally {
  readonly failed: ListedObject[] = [];
  readonly failures: KeyFailure[] = [];
  readonly markers: ListedObject[] = [];
  readonly nullMarkers: ListedObject[] = [];
  retriedKeys = 0;

  /** S3 laid a delete marker, of version id `markerVersionId`, for an entry sent without one. */
  marked(object: ListedObject, markerVersionId: string | undefined) {
    this.markers.push(object);
    if (markerVersionId === undefined || markerVersionId === 'null') this.nullMarkers.push(object);
  }

  fail(object: ListedObject, code: string, message: string) {
    this.failed.push(object);
    this.failures.push({
      key: object.key,
      code,
      message,
      ...(object.versionId ? { versionId: object.versionId } : {}),
    });
  }

  result(objects: ListedObject[]): PageResult {
    // Delete markers are removed like versions but are not objects of the stream.
    const counted = (list: ListedObject[]) => list.filter((object) => !object.marker);
    const bytes = (list: ListedObject[]) =>
      counted(list).reduce((sum, object) => sum + object.size, 0);
    return {
      objects: counted(objects).length - counted(this.failed).length - this.markers.length,
      bytes: bytes(objects) - bytes(this.failed) - bytes(this.markers),
      failures: this.failures,
      failedObjects: counted(this.failed).length,
      failedBytes: bytes(this.failed),
      markersLaid: this.markers.length,
      markersLaidBytes: bytes(this.markers),
      nullMarkers: this.nullMarkers,
      retriedKeys: this.retriedKeys,
    };
  }
}

/**
 * Deletes one page: its keys in one DeleteObjects, keys an XML body cannot carry one by one.
 * DeleteObjects answers 200 even when keys fail: its per-key `Errors` are failures, never
 * successes. Transient ones (per key or of the whole request) are retried with backoff and
 * jitter; if they outlast the retries the page throws, so the message is redelivered. A whole
 * request answered SlowDown throws SlowDownError at once, and so do keys still answered SlowDown
 * when the retries are spent: the page's chain slows down.
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
    const tally = new Tally();
    const alone = objects.filter((object) => !fitsXml(object.key));
    const rest = await this.#inBatch(
      bucket,
      objects.filter((object) => fitsXml(object.key)),
      tally,
    );
    for (const object of [...alone, ...rest]) await this.#alone(bucket, object, tally);
    return tally.result(objects);
  }

  /** One DeleteObjects per attempt; answers what S3 refused to take as XML (MalformedXML). */
  async #inBatch(bucket: string, objects: ListedObject[], tally: Tally): Promise<ListedObject[]> {
    const byId = new Map(objects.map((object) => [idOf(object.key, object.versionId), object]));
    let pending = objects;
    // Whether the keys still pending were last refused with SlowDown: S3 asks for a slower
    // rate, and only the chain's pace gives it one (in-Lambda retries do not).
    let slowedDown = false;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= this.#maxAttempts) {
        if (slowedDown) {
          throw new SlowDownError(
            `DeleteObjects in ${bucket}: ${pending.length} keys still refused with SlowDown`,
          );
        }
        throw new TransientPageError(
          `${pending.length} keys still failing after ${attempt} attempts, e.g. ${pending[0]?.key}`,
        );
      }
      if (attempt > 0) {
        tally.retriedKeys += pending.length;
        await this.#sleep(backoff(attempt, this.#backoffMs, RETRY.throttling.capMs));
      }
      let answer: DeleteObjectsCommandOutput;
      try {
        answer = await this.#client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: {
              Objects: pending.map(({ key, versionId }) => ({
                Key: key,
                ...(versionId ? { VersionId: versionId } : {}),
              })),
              // Not quiet: a key that got a delete marker says so in Deleted.
              Quiet: false,
            },
          }),
        );
      } catch (error) {
        // A key this code took for XML-safe was not: the page goes one key at a time.
        if (error instanceof S3ServiceException && error.name === 'MalformedXML') return pending;
        if (isSlowDown(error)) throw new SlowDownError(`DeleteObjects in ${bucket}: SlowDown`);
        slowedDown = false;
        if (isTransientError(error)) continue;
        throw error;
      }
      for (const deleted of answer.Deleted ?? []) {
        const object = byId.get(idOf(deleted.Key ?? '', deleted.VersionId));
        if (deleted.DeleteMarker && object && !object.versionId) {
          tally.marked(object, deleted.DeleteMarkerVersionId);
        }
      }
      pending = sortErrors(answer.Errors ?? [], pending, byId, tally);
      slowedDown = slowDownFor(answer.Errors ?? [], pending);
    }
    return [];
  }

  /** DeleteObject of one key, tried again while its error passes with time. */
  async #alone(bucket: string, object: ListedObject, tally: Tally): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await this.#sleep(backoff(attempt, this.#backoffMs, RETRY.throttling.capMs));
      try {
        const answer = await this.#client.send(
          new DeleteObjectCommand({
            Bucket: bucket,
            Key: object.key,
            ...(object.versionId ? { VersionId: object.versionId } : {}),
          }),
        );
        // A marker's answer names the marker's own version id.
        if (answer.DeleteMarker && !object.versionId) tally.marked(object, answer.VersionId);
        return;
      } catch (error) {
        if (isSlowDown(error)) throw new SlowDownError(`DeleteObject in ${bucket}: SlowDown`);
        if (!isTransientError(error)) {
          const failure = error as S3ServiceException;
          tally.fail(object, failure.name, failure.message);
          return;
        }
        if (attempt + 1 >= this.#maxAttempts) throw error;
      }
    }
  }
}

/**
 * Sorts a DeleteObjects answer's per-key errors: keys refused for good go to the tally, the
 * ones to send again are answered. S3 names the version of an error when the request named one;
 * an error that does not counts for every version of that key in the request, and several
 * such errors may name one key (one per version sent). So each entry is decided once: refused
 * once, and never both refused and sent again. Never a success.
 */
function sortErrors(
  errors: NonNullable<DeleteObjectsCommandOutput['Errors']>,
  pending: ListedObject[],
  byId: Map<string, ListedObject>,
  tally: Tally,
): ListedObject[] {
  const refused = new Set<ListedObject>();
  const retry = new Set<ListedObject>();
  for (const error of errors) {
    const exact = byId.get(idOf(error.Key ?? '', error.VersionId));
    const failing = exact ? [exact] : pending.filter((object) => object.key === error.Key);
    if (failing.length === 0) {
      throw new Error(`DeleteObjects reported an error for a key it was not given: ${error.Key}`);
    }
    for (const object of failing.filter((entry) => !refused.has(entry))) {
      if (isTransientCode(error.Code)) {
        retry.add(object);
        continue;
      }
      refused.add(object);
      retry.delete(object);
      tally.fail(object, error.Code ?? 'Unknown', error.Message ?? '');
    }
  }
  return [...retry];
}

/** Whether S3 answered SlowDown for a key that is to be sent again. */
const slowDownFor = (
  errors: NonNullable<DeleteObjectsCommandOutput['Errors']>,
  pending: ListedObject[],
) =>
  errors.some(
    (error) => error.Code === 'SlowDown' && pending.some((object) => object.key === error.Key),
  );

const idOf = (key: string, versionId: string | undefined) => `${key}\u0000${versionId ?? ''}`;
