import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { sleep } from '../support/index.ts';
import { failedIndexes } from './batch-outcomes.ts';
import type { LocalEventSource } from './provision.ts';
import type { Invoke } from './stream-poller.ts';

/** Long poll of each receive: short, so that a stopped runtime stops listening soon. */
const WAIT_SECONDS = 1;

export interface QueuePollerOptions {
  readonly sqs: SQSClient;
  readonly source: LocalEventSource;
  readonly queueUrl: string;
  readonly invoke: Invoke<SQSEvent>;
  readonly region: string;
  /** Pollers at once; the mapping's MaximumConcurrency unless overridden. */
  readonly concurrency?: number;
  readonly log?: (message: string) => void;
}

/**
 * Polls an SQS queue the way Lambda's event source mapping does: up to `BatchSize` messages
 * per invocation, at most `MaximumConcurrency` invocations at once; successful messages are
 * deleted, failed ones (`batchItemFailures`, or all on a throw) stay for the visibility
 * timeout and come back, and the queue's redrive policy moves them to its DLQ.
 *
 * One receive is in flight at a time (invocations still run `MaximumConcurrency` at once):
 * moto hands one message to two receives that race (2 of 200 messages with 20 receivers, none
 * with one), and every idle receiver costs it a request a second.
 */
export class QueuePoller {
  readonly #options: QueuePollerOptions;
  #running = false;
  #loops: Array<Promise<void>> = [];
  /** Settles when the receive in flight (if any) has returned. */
  #turn: Promise<void> = Promise.resolve();

  constructor(options: QueuePollerOptions) {
    this.#options = options;
  }

  get concurrency() {
    return this.#options.concurrency ?? this.#options.source.maxConcurrency ?? 5;
  }

  start() {
    this.#running = true;
    this.#loops = Array.from({ length: this.concurrency }, () => this.#loop());
  }

  async stop() {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  async #loop() {
    const { sqs, source, queueUrl } = this.#options;
    while (this.#running) {
      try {
        const messages = await this.#receive();
        if (messages.length === 0) continue;
        const records: SQSRecord[] = messages.map((message) => ({
          messageId: message.MessageId ?? '',
          receiptHandle: message.ReceiptHandle ?? '',
          body: message.Body ?? '',
          attributes: message.Attributes as unknown as SQSRecord['attributes'],
          messageAttributes: {},
          md5OfBody: message.MD5OfBody ?? '',
          eventSource: 'aws:sqs',
          eventSourceARN: source.sourceArn,
          awsRegion: this.#options.region,
        }));
        const failed = await this.#invoke(records);
        const done = records.filter((record) => !failed.has(record.messageId));
        if (done.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: done.map((record, index) => ({
                Id: String(index),
                ReceiptHandle: record.receiptHandle,
              })),
            }),
          );
        }
      } catch (error) {
        this.#options.log?.(`queue poller: ${(error as Error).message}`);
        await sleep(500);
      }
    }
  }

  /** Waits for its turn, then receives (nothing once stopped, so that stop() is prompt). */
  async #receive(): Promise<Message[]> {
    const { sqs, source, queueUrl } = this.#options;
    const previous = this.#turn;
    let release = () => {};
    this.#turn = new Promise((resolve) => {
      release = resolve;
    });
    try {
      await previous;
      if (!this.#running) return [];
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, source.batchSize),
          WaitTimeSeconds: WAIT_SECONDS,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        // A receive that never answers would hold every poller's turn: give it up.
        { abortSignal: AbortSignal.timeout(WAIT_SECONDS * 1000 + 10_000) },
      );
      return Messages;
    } finally {
      release();
    }
  }

  /** Ids of the messages that failed (all of them when the function threw). */
  async #invoke(records: SQSRecord[]): Promise<Set<string>> {
    const ids = records.map((record) => record.messageId);
    try {
      const response = await this.#options.invoke({ Records: records });
      if (!this.#options.source.reportBatchItemFailures) return new Set();
      return new Set(failedIndexes(response, ids).map((index) => ids[index] as string));
    } catch (error) {
      this.#options.log?.(`worker invocation failed: ${(error as Error).message}`);
      return new Set(ids);
    }
  }
}
