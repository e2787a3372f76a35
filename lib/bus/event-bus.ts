import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';

export interface BusEvent {
  /** `Deletion State Change`, ... */
  detailType: string;
  detail: unknown;
  /** When the change happened (the record's own time, not the time of publishing). */
  time: Date;
}

export interface EventBusOptions {
  readonly client: EventBridgeClient;
  readonly busName: string;
  /** The `source` of every event. @default 'lethe' */
  readonly source?: string;
}

/** Entries a PutEvents call takes at most. */
export const MAX_ENTRIES = 10;

/** What EventBridge did with a call's events: all put, or the first it refused. */
export type PutResult = { ok: true } | { ok: false; index: number; reason: string };

/** Lethe's EventBridge bus. */
export class EventBus {
  readonly #client: EventBridgeClient;
  readonly #busName: string;
  readonly #source: string;

  constructor(options: EventBusOptions) {
    this.#client = options.client;
    this.#busName = options.busName;
    this.#source = options.source ?? 'lethe';
  }

  /**
   * Up to ten events in one call. EventBridge takes or refuses each entry on its own, so
   * events after a refused one may be on the bus already: the caller sends one event per
   * subject at most, and retries from the refused one.
   */
  async putAll(events: BusEvent[]): Promise<PutResult> {
    if (events.length > MAX_ENTRIES) throw new RangeError(`at most ${MAX_ENTRIES} events a call`);
    if (events.length === 0) return { ok: true };
    const { FailedEntryCount, Entries = [] } = await this.#client.send(
      new PutEventsCommand({
        Entries: events.map((event) => ({
          EventBusName: this.#busName,
          Source: this.#source,
          DetailType: event.detailType,
          Detail: JSON.stringify(event.detail),
          Time: event.time,
        })),
      }),
    );
    if (!FailedEntryCount) return { ok: true };
    const index = Entries.findIndex((entry) => entry.ErrorCode !== undefined);
    const entry = Entries[index];
    return {
      ok: false,
      index: Math.max(index, 0),
      reason: `${entry?.ErrorCode} ${entry?.ErrorMessage}`,
    };
  }
}
