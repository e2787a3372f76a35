import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { WorkMessage } from '../core/index.ts';
import { RETRY, retry } from '../support/index.ts';

/** SQS's longest message delay, in seconds. */
export const MAX_DELAY_SECONDS = 900;

export interface WorkQueueOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
}

/**
 * A work queue (deletion pages, or plan pages): every message is sent in batches of ten, and
 * partial failures resent.
 */
export class WorkQueue<M extends object = WorkMessage> {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(options: WorkQueueOptions) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
  }

  async send(messages: M[], delaySeconds = 0): Promise<void> {
    for (let start = 0; start < messages.length; start += 10) {
      let entries = messages.slice(start, start + 10).map((message, index) => ({
        Id: String(index),
        MessageBody: JSON.stringify(message),
        ...(delaySeconds > 0
          ? { DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil(delaySeconds)) }
          : {}),
      }));
      await retry(RETRY.throttling, async () => {
        const { Failed = [] } = await this.#client.send(
          new SendMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries: entries }),
        );
        if (Failed.some((failure) => failure.SenderFault)) {
          throw new Error(`could not enqueue work: ${JSON.stringify(Failed)}`);
        }
        const failed = new Set(Failed.map((failure) => failure.Id));
        entries = entries.filter((entry) => failed.has(entry.Id));
        return entries.length === 0
          ? { done: true, value: undefined }
          : { done: false, why: `could not enqueue work: ${JSON.stringify(Failed)}` };
      });
    }
  }
}
