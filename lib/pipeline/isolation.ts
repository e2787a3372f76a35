/** The keys of an item a sweep looks at: tenant, and deletionId, offboardingId, planId or stream. */
export type SweepKeys = Readonly<Record<string, string>>;

/**
 * An item a sweep could not handle (or a listing it could not read to its end): what it was
 * doing, the item's keys (none for a listing) and the error. The sweep goes on without it.
 */
export interface SweepFailure {
  readonly step: string;
  readonly keys: SweepKeys;
  readonly error: unknown;
}

/** Told of each failure as it happens, by whoever runs the sweep: it logs and counts it. */
export type SweepFailed = (failure: SweepFailure) => void;

/** What a listing and the items read from it are called in a failure, and how keys are read. */
export interface SweepSteps<T> {
  /** e.g. `list due deletions` */
  readonly list: string;
  /** e.g. `begin deletion` */
  readonly item: string;
  readonly keys: (item: T) => SweepKeys;
}

/**
 * Handles each item of a listing in isolation: one that throws (a poison record, a bug, a
 * permission missing for one bucket) is reported to `failed` and the next is handled, so no
 * single item stops the sweep. A listing that throws ends the loop (there is no next item to
 * read), reported the same way. Answers how many failed, so a sweep's report never hides them,
 * and whether the listing was read to its end.
 */
export async function eachInIsolation<T>(
  items: () => AsyncIterable<T>,
  steps: SweepSteps<T>,
  failed: SweepFailed | undefined,
  handle: (item: T) => Promise<void>,
): Promise<{ failures: number; listed: boolean }> {
  let failures = 0;
  try {
    for await (const item of items()) {
      try {
        await handle(item);
      } catch (error) {
        failures++;
        failed?.({ step: steps.item, keys: steps.keys(item), error });
      }
    }
  } catch (error) {
    failed?.({ step: steps.list, keys: {}, error });
    return { failures: failures + 1, listed: false };
  }
  return { failures, listed: true };
}

/** The keys of a deletion, for a failure. */
export const deletionKeys = (deletion: {
  tenant: string;
  stream: string;
  deletionId: string;
}): SweepKeys => ({
  tenant: deletion.tenant,
  stream: deletion.stream,
  deletionId: deletion.deletionId,
});
