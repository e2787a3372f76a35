import { randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type Clock, type StreamRecord, systemClock } from '../core/index.ts';

export interface EventWriterOptions {
  readonly client: S3Client;
  /**
   * Milliseconds from an ingest's admission (the stream's `lastIngestAt`, as its admit wrote
   * it) after which its write is abandoned: keep it under the grace a deletion gives an ingest
   * in flight, which counts from there too (an admit the SDK retried has used some of it).
   */
  readonly timeoutMs?: number;
  readonly clock?: Clock;
  readonly newId?: () => string;
}

/**
 * Writes one batch of events as one object under the stream's location, by date: the bytes the
 * user sent, as they were checked. Parsed and written out again, JSON loses what a parser
 * cannot hold (digits of a large integer, 1e400, -0, a repeated name's first value).
 */
export class EventWriter {
  readonly #client: S3Client;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #newId: () => string;

  constructor(options: EventWriterOptions) {
    this.#client = options.client;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#clock = options.clock ?? systemClock;
    this.#newId = options.newId ?? randomUUID;
  }

  async write(stream: StreamRecord, events: Uint8Array): Promise<string> {
    const now = this.#clock.now();
    const admittedAt = stream.lastIngestAt ? Date.parse(stream.lastIngestAt) : now.getTime();
    const leftMs = Math.min(this.#timeoutMs, admittedAt + this.#timeoutMs - now.getTime());
    const stamp = now.toISOString().replace(/[-:.]/g, '');
    const key = `${stream.prefix}dt=${now.toISOString().slice(0, 10)}/${stamp}-${this.#newId()}.json`;
    await this.#client.send(
      new PutObjectCommand({
        Bucket: stream.bucket,
        Key: key,
        Body: events,
        ContentType: 'application/json',
      }),
      { abortSignal: AbortSignal.timeout(Math.max(0, leftMs)) },
    );
    return key;
  }
}
