import type { BusEvent } from '../bus/index.ts';
import { type DeletionRecord, type OffboardingRecord, toReceipt } from '../core/index.ts';

export interface PublisherOptions {
  readonly bus: { put(event: BusEvent): Promise<void> };
}

export type PublishOutcome = 'published' | 'unchanged';

/** What a change of the table's stream says about a deletion: its image before and after. */
export interface DeletionChange {
  before?: DeletionRecord | undefined;
  after: DeletionRecord;
}

export const DELETION_STATE_CHANGE = 'Deletion State Change';
export const OFFBOARDING_STATE_CHANGE = 'Tenant Offboarding State Change';

/**
 * Puts every state change of a deletion on the event bus, with its receipt as it stood then.
 * Driven by the table's stream (the writes are the outbox), so no change is lost between the
 * write and its event; at least once, in the stream's order per item.
 */
export class StateChangePublisher {
  readonly #bus: PublisherOptions['bus'];

  constructor(options: PublisherOptions) {
    this.#bus = options.bus;
  }

  /** An offboarding's change (see `publishOffboarding`). */
  publishOffboarding(change: { before?: OffboardingRecord | undefined; after: OffboardingRecord }) {
    return publishOffboarding(this.#bus, change);
  }

  async publish({ before, after }: DeletionChange): Promise<PublishOutcome> {
    // Every write to a deletion reaches the stream; only a new state is an event. A new
    // round (RUNNING -> PENDING) is a state change too.
    const changed = !before || before.state !== after.state || before.round !== after.round;
    if (!changed) return 'unchanged';
    await this.#bus.put({
      detailType: DELETION_STATE_CHANGE,
      detail: toReceipt(after),
      time: new Date(after.updatedAt),
    });
    return 'published';
  }
}

/** A tenant offboarding's state change: what it took in and, once it ended, what it deleted. */
export async function publishOffboarding(
  bus: PublisherOptions['bus'],
  { before, after }: { before?: OffboardingRecord | undefined; after: OffboardingRecord },
): Promise<PublishOutcome> {
  if (before?.state === after.state && before.offboardingId === after.offboardingId) {
    return 'unchanged';
  }
  const { type: _type, fanoutAfter: _after, ...detail } = after;
  await bus.put({
    detailType: OFFBOARDING_STATE_CHANGE,
    detail,
    time: new Date(after.updatedAt),
  });
  return 'published';
}
