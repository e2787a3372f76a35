import type { DeletionRecord, OffboardingLink } from '../core/index.ts';

/** One stream an offboarding took in: its link, and its deletion (undefined once it expired). */
export interface Linked {
  link: OffboardingLink;
  deletion: DeletionRecord | undefined;
}

/**
 * The stream's data is gone: its deletion COMPLETED, or it was counted so, which holds once that
 * deletion's receipt has expired (`receiptRetentionDays`) and reads as undefined.
 */
export const isDone = ({ link, deletion }: Linked): boolean =>
  link.completed === true || deletion?.state === 'COMPLETED';

/** COMPLETED, not counted yet: its record failed in the dispatcher, or named no offboarding. */
export const isUncounted = ({ link, deletion }: Linked): boolean =>
  link.completed !== true && deletion?.state === 'COMPLETED';

/** The sums of its deletions' receipts, those still there. */
export const totalsOf = (linked: readonly Linked[]) =>
  linked.reduce(
    (sum, { deletion }) => ({
      objectsDeleted: sum.objectsDeleted + (deletion?.objectsDeleted ?? 0),
      bytesDeleted: sum.bytesDeleted + (deletion?.bytesDeleted ?? 0),
    }),
    { objectsDeleted: 0, bytesDeleted: 0 },
  );
