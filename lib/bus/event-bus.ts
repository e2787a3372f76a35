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

export class PublishError extends Error {
  override readonly name = 'PublishError';
}

/** Lethe's EventBridge bus: one event per call, so a failure never reorders what follows it. */
export class EventBus {
  readonly #client: EventBridgeClient;
  readonly #busName: string;
  readonly #source: string;

  constructor(options: EventBusOptions) {
    this.#client = options.client;
    this.#busName = options.busName;
    this.#source = options.source ?? 'lethe';
  }

  async put(event: BusEvent): Promise<void> {
    const { FailedEntryCount, Entries = [] } = await this.#client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.#busName,
            Source: this.#source,
            DetailType: event.detailType,
            Detail: JSON.stringify(event.detail),
            Time: event.time,
          },
        ],
      }),
    );
    if (FailedEntryCount) {
      const [entry] = Entries;
      throw new PublishError(
        `EventBridge refused the event: ${entry?.ErrorCode} ${entry?.ErrorMessage}`,
      );
    }
  }
}
