import type { DeletionRecord, FailureReason } from '../core/index.ts';
import { count, currentLogger, keysOf, sample } from './telemetry.ts';

/**
 * Deletion events as the Lambda functions report them: a log line in the invocation that made
 * the change, and its metrics (each end is counted once: one conditional write ends a deletion).
 * Shaped as lib/pipeline's `DeletionEvents` port.
 */
export const loggedDeletionEvents = {
  ended(deletion: DeletionRecord, seconds: number, reason?: FailureReason) {
    if (deletion.state === 'COMPLETED') {
      count('deletionsCompleted', 1);
      sample('deletionDuration', seconds);
      currentLogger()?.info('deletion completed', {
        ...keysOf(deletion),
        objectsDeleted: deletion.objectsDeleted,
        bytesDeleted: deletion.bytesDeleted,
        durationSeconds: seconds,
      });
      return;
    }
    count('deletionsFailed', 1);
    currentLogger()?.warn('deletion failed', {
      ...keysOf(deletion),
      failedObjects: deletion.failedObjects,
      ...(reason ? { reason } : {}),
    });
  },

  resumed(deletion: DeletionRecord, lastProgress: string) {
    currentLogger()?.warn('resuming a stalled deletion', {
      ...keysOf(deletion),
      state: deletion.state,
      attempts: deletion.attempts,
      lastProgress,
    });
  },
};
