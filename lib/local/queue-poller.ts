import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { sleep } from '../support/index.ts';
import type { AccountConcurrency } from './account-concurrency.ts';
import { failedIndexes } from './batch-outcomes.ts';
import { type LineageLedger, merged, pastLimit, runWithLineage } from './lineage.ts';
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
  /** The queue's visibility timeout: how long a throttled batch is retried. @default 30 */
  readonly visibilityTimeoutSeconds?: number;
  /** Lambda's recursive loop detection (opt-in): the function's setting and where to. */
  readonly loops?: LoopDetection;
  /** The account's concurrency (opt-in): an invoke above it is throttled. */
  readonly account?: AccountConcurrency;
  readonly log?: (message: string) => void;
}

export interface LoopDetection {
  readonly ledger: LineageLedger;
  /** The function's RecursiveLoop: whether Lambda stops a chain past the limit. */
  readonly terminate: boolean;
  /** The queue's dead-letter queue (its redrive policy's target), if it has one. */
  readonly deadLetterUrl?: string;
}

/**
 * Polls an SQS queue the way Lambda's event source mapping does: up to `BatchSize` messages
 * per invocation, at most `MaximumConcurrency` invocations at once; successful messages are
 * deleted, failed ones (`batchItemFailures`, or all on a throw) stay for the visibility
 * timeout and come back, and the queue's redrive policy moves them to its DLQ.
 *
 * With loop detection on, a message whose chain has invoked the function 16 times already is
 * not delivered when the function says Terminate: it goes to the queue's dead-letter queue
 * (dropped without one), as Lambda does. With an account concurrency, a batch the account has
 * no room for is retried until its visibility timeout runs out, then left to come back.
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
    const { sqs, queueUrl } = this.#options;
    while (this.#running) {
      try {
        const received = await this.#receive();
        if (received.length === 0) continue;
        const receivedAt = Date.now();
        const messages = await this.#stopLoops(received);
        if (messages.length === 0) continue;
        const records = messages.map((message) => this.#record(message));
        const failed = await this.#invoke(records, messages, receivedAt);
        // Throttled past the visibility timeout: the batch comes back by itself.
        if (failed === 'throttled') continue;
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
          for (const record of done) this.#options.loops?.ledger.forget(record.body);
        }
      } catch (error) {
        this.#options.log?.(`queue poller: ${(error as Error).message}`);
        await sleep(500);
      }
    }
  }

  #record(message: Message): SQSRecord {
    return {
      messageId: message.MessageId ?? '',
      receiptHandle: message.ReceiptHandle ?? '',
      body: message.Body ?? '',
      attributes: message.Attributes as unknown as SQSRecord['attributes'],
      messageAttributes: {},
      md5OfBody: message.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.#options.source.sourceArn,
      awsRegion: this.#options.region,
    };
  }

  /**
   * The messages Lambda delivers: with loop detection and Terminate, one whose chain has reached
   * the limit goes to the dead-letter queue (or is dropped) instead, as Lambda stops it.
   */
  async #stopLoops(messages: Message[]): Promise<Message[]> {
    const { loops, sqs, queueUrl, source, log } = this.#options;
    if (!loops?.terminate) return messages;
    const deliver: Message[] = [];
    for (const message of messages) {
      if (!pastLimit(loops.ledger.of(message), source.functionId)) {
        deliver.push(message);
        continue;
      }
      log?.(`recursive loop: ${source.functionId} not invoked for message ${message.MessageId}`);
      if (loops.deadLetterUrl) {
        await sqs.send(
          new SendMessageCommand({ QueueUrl: loops.deadLetterUrl, MessageBody: message.Body }),
        );
      }
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: [{ Id: '0', ReceiptHandle: message.ReceiptHandle }],
        }),
      );
      loops.ledger.forget(message.Body);
    }
    return deliver;
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

  /**
   * Ids of the messages that failed (all of them when the function threw), or 'throttled' when
   * the account had no room for the batch within its visibility timeout.
   */
  async #invoke(
    records: SQSRecord[],
    messages: Message[],
    receivedAt: number,
  ): Promise<Set<string> | 'throttled'> {
    const { account, loops, visibilityTimeoutSeconds = 30 } = this.#options;
    const release = account
      ? await account.acquire({
          until: receivedAt + visibilityTimeoutSeconds * 1000,
          giveUp: () => !this.#running,
        })
      : () => {};
    if (!release) return 'throttled';
    const ids = records.map((record) => record.messageId);
    const call = () => this.#options.invoke({ Records: records });
    try {
      const response = loops
        ? await runWithLineage(merged(messages.map((message) => loops.ledger.of(message))), call)
        : await call();
      if (!this.#options.source.reportBatchItemFailures) return new Set();
      return new Set(failedIndexes(response, ids).map((index) => ids[index] as string));
    } catch (error) {
      this.#options.log?.(`worker invocation failed: ${(error as Error).message}`);
      return new Set(ids);
    } finally {
      release();
    }
  }
}
