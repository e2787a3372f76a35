import { type BusEvent, MAX_ENTRIES, type PutResult } from '../bus/index.ts';
import {
  type DeletionRecord,
  type OffboardingRecord,
  offboardingStateAt,
  toOffboardingView,
  toReceipt,
} from '../core/index.ts';

export interface PublisherOptions {
  readonly bus: { putAll(events: BusEvent[]): Promise<PutResult> };
}

/** What a change of the table's stream says about a deletion: its image before and after. */
export interface DeletionChange {
  before?: DeletionRecord | undefined;
  after: DeletionRecord;
}

/** The same for a tenant's offboarding. */
export interface OffboardingChange {
  before?: OffboardingRecord | undefined;
  after: OffboardingRecord;
}

/** An event to announce, and what it is about (a deletion, an offboarding). */
export interface Announcement {
  subject: string;
  event: BusEvent;
}

/** How far a run of announcements got: all of them, or up to the first EventBridge refused. */
export type PublishResult = { published: number; refused?: string };

export const DELETION_STATE_CHANGE = 'Deletion State Change';
export const OFFBOARDING_STATE_CHANGE = 'Tenant Offboarding State Change';

/**
 * A deletion's state change, with its receipt as it stood then; nothing for a write that left
 * its state as it was. A new round (RUNNING -> PENDING) is a state change too.
 */
export function deletionAnnouncement({ before, after }: DeletionChange): Announcement | undefined {
  const changed = !before || before.state !== after.state || before.round !== after.round;
  if (!changed) return undefined;
  // The record holds no refused keys (each is an item of its own, read by GET): a FAILED
  // event says how many (`failedObjects`) and its reason, never an empty list of them.
  const { failures, ...receipt } = toReceipt(after);
  return {
    subject: `DELETION#${after.deletionId}`,
    event: {
      detailType: DELETION_STATE_CHANGE,
      detail: { ...(failures?.length ? { ...receipt, failures } : receipt), ...placeOf(after) },
      time: new Date(after.updatedAt),
    },
  };
}

/**
 * A tenant offboarding's state change, as the API answers it at that write (SCHEDULED while its
 * grace window lasts, RUNNING from the first write after it, COMPLETED, CANCELLED), once each;
 * the detail is its view from the item alone (no deletion ids or states, no table keys).
 */
export function offboardingAnnouncement({
  before,
  after,
}: OffboardingChange): Announcement | undefined {
  const at = new Date(after.updatedAt);
  const same = before?.offboardingId === after.offboardingId;
  if (
    before &&
    same &&
    offboardingStateAt(before, new Date(before.updatedAt)) === offboardingStateAt(after, at)
  ) {
    return undefined;
  }
  return {
    subject: `OFFBOARDING#${after.offboardingId}`,
    event: {
      detailType: OFFBOARDING_STATE_CHANGE,
      detail: { ...toOffboardingView(after, at), ...placeOf(after) },
      time: at,
    },
  };
}

/**
 * Where a change stands among its item's: `sequence` grows with every write of the item (a
 * replayed event has the one it had), `changedAt` is the write's time. A consumer keeps the
 * highest sequence it has seen per id and ignores an event at or below it. Items written before
 * sequences were counted say 0 until their next write.
 */
function placeOf(item: { sequence?: number; updatedAt: string }) {
  return { sequence: item.sequence ?? 0, changedAt: item.updatedAt };
}

/**
 * Puts state changes on the event bus, in the table stream's order. Driven by the stream (the
 * writes are the outbox), so no change is lost between the write and its event; at least once.
 */
export class StateChangePublisher {
  readonly #bus: PublisherOptions['bus'];

  constructor(options: PublisherOptions) {
    this.#bus = options.bus;
  }

  /**
   * Announces in order, up to ten events a call and never two of one subject in a call:
   * EventBridge takes or refuses each entry on its own, so an event refused must not be
   * overtaken by a later one of its subject. Stops at the first refusal; the events after it
   * in that call may be on the bus already, and come again when the caller retries from it.
   * A call that fails outright (the SDK gave up) counts as refused from its first event.
   */
  async publish(announcements: Announcement[]): Promise<PublishResult> {
    let published = 0;
    while (published < announcements.length) {
      const call = nextCall(announcements, published);
      let result: PutResult;
      try {
        result = await this.#bus.putAll(call.map((announcement) => announcement.event));
      } catch (error) {
        // Not put, as far as anyone knows: the whole call comes again.
        return { published, refused: error instanceof Error ? error.message : String(error) };
      }
      if (!result.ok) return { published: published + result.index, refused: result.reason };
      published += call.length;
    }
    return { published };
  }
}

/** The announcements from `start` on that one call takes: up to ten, each subject once. */
function nextCall(announcements: Announcement[], start: number): Announcement[] {
  const subjects = new Set<string>();
  const call: Announcement[] = [];
  for (const announcement of announcements.slice(start, start + MAX_ENTRIES)) {
    if (subjects.has(announcement.subject)) break;
    subjects.add(announcement.subject);
    call.push(announcement);
  }
  return call;
}
