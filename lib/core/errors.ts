/** Base class for errors the API turns into a 4xx answer. */
export abstract class LetheError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  readonly headers: Record<string, string> = {};
}

export class InvalidNameError extends LetheError {
  readonly code = 'InvalidName';
  readonly status = 400;
  override readonly name = 'InvalidNameError';
}

export class BadRequestError extends LetheError {
  readonly status = 400;
  override readonly name = 'BadRequestError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class PayloadTooLargeError extends LetheError {
  readonly code = 'PayloadTooLarge';
  readonly status = 413;
  override readonly name = 'PayloadTooLargeError';
}

export class StreamNotFoundError extends LetheError {
  readonly code = 'StreamNotFound';
  readonly status = 404;
  override readonly name = 'StreamNotFoundError';
  constructor(tenant: string, stream: string) {
    super(`stream ${tenant}/${stream} does not exist`);
  }
}

export class DeletionNotFoundError extends LetheError {
  readonly code = 'DeletionNotFound';
  readonly status = 404;
  override readonly name = 'DeletionNotFoundError';
  constructor(tenant: string, deletionId: string) {
    super(`deletion ${deletionId} does not exist for tenant ${tenant}`);
  }
}

export class StreamDeletingError extends LetheError {
  readonly code = 'StreamDeleting';
  readonly status = 409;
  override readonly name = 'StreamDeletingError';
  readonly deletionId: string | undefined;

  /**
   * `executeAfter`, when the deletion is still in its grace window: the refusal says so, and
   * its Retry-After reaches past the window.
   */
  constructor(
    stream: { tenant: string; stream: string; deletionId?: string; executeAfter?: string },
    retryAfterSeconds: number,
    now: Date,
  ) {
    const name = `${stream.tenant}/${stream.stream}`;
    const id = stream.deletionId ? ` (deletion ${stream.deletionId})` : '';
    const window = stream.executeAfter ? Date.parse(stream.executeAfter) - now.getTime() : 0;
    super(
      window > 0
        ? `stream ${name} is scheduled for deletion at ${stream.executeAfter}${id}; cancel the deletion to keep it, or retry after it completes`
        : `stream ${name} is being deleted${id}; retry after the deletion completes`,
    );
    this.deletionId = stream.deletionId;
    const seconds = Math.max(0, Math.ceil(window / 1000)) + retryAfterSeconds;
    this.headers['Retry-After'] = String(seconds);
  }
}

export class DeletionNotCancellableError extends LetheError {
  readonly code = 'DeletionNotCancellable';
  readonly status = 409;
  override readonly name = 'DeletionNotCancellableError';
  constructor(deletionId: string, state: string) {
    super(`deletion ${deletionId} is ${state}: only a SCHEDULED deletion can be cancelled`);
  }
}

export class DeletionNotScheduledError extends LetheError {
  readonly code = 'DeletionNotScheduled';
  readonly status = 409;
  override readonly name = 'DeletionNotScheduledError';
  constructor(deletionId: string, state: string) {
    super(`deletion ${deletionId} is ${state}: only a SCHEDULED deletion can be expedited`);
  }
}

export class DeletionNotRetryableError extends LetheError {
  readonly code = 'DeletionNotRetryable';
  readonly status = 409;
  override readonly name = 'DeletionNotRetryableError';
}

/** A retry of a deletion that has nothing left to retry: it completed, or was cancelled. */
export const notRetryable = (deletionId: string, state: 'COMPLETED' | 'CANCELLED') =>
  new DeletionNotRetryableError(
    state === 'COMPLETED'
      ? `deletion ${deletionId} has already completed`
      : `deletion ${deletionId} was cancelled and deleted nothing; delete the stream again to delete it`,
  );

export class RouteNotFoundError extends LetheError {
  readonly code = 'RouteNotFound';
  readonly status = 404;
  override readonly name = 'RouteNotFoundError';
}

export class MethodNotAllowedError extends LetheError {
  readonly code = 'MethodNotAllowed';
  readonly status = 405;
  override readonly name = 'MethodNotAllowedError';
  constructor(method: string, allowed: readonly string[]) {
    super(`${method} is not allowed here; use ${allowed.join(', ')}`);
    this.headers.Allow = allowed.join(', ');
  }
}

/** A page could not be fully deleted for a reason that may pass (throttling, 5xx): retry it. */
export class TransientPageError extends Error {
  override readonly name = 'TransientPageError';
}

/**
 * S3 answered a whole delete request with 503 SlowDown: the chain is over the rate its prefix
 * partition allows. Not retried on the spot; the chain slows down (lib/pipeline/pace).
 */
export class SlowDownError extends Error {
  override readonly name = 'SlowDownError';
}

/** A work message that can never be processed; it goes to the DLQ after its redrive count. */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
}

export class DeletionNotCompletedError extends LetheError {
  readonly code = 'DeletionNotCompleted';
  readonly status = 409;
  override readonly name = 'DeletionNotCompletedError';
  constructor(deletionId: string, state: string) {
    super(`deletion ${deletionId} is ${state}: only a COMPLETED deletion has a certificate`);
  }
}

export class CertificateKeyNotFoundError extends LetheError {
  readonly code = 'CertificateKeyNotFound';
  readonly status = 404;
  override readonly name = 'CertificateKeyNotFoundError';
  constructor(keyId: string) {
    super(`no certificate was ever signed with key ${keyId}`);
  }
}

export class PartitionDeletionInProgressError extends LetheError {
  readonly code = 'PartitionDeletionInProgress';
  readonly status = 409;
  override readonly name = 'PartitionDeletionInProgressError';
  constructor(
    stream: string,
    readonly deletionId: string,
    before: string | undefined,
  ) {
    super(
      `a deletion of the partitions of ${stream} before ${before} is under way (deletion ${deletionId}); retry when it has ended`,
    );
    this.headers['Retry-After'] = '30';
  }
}
