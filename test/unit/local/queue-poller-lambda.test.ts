import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccountConcurrency } from '../../../lib/local/account-concurrency.ts';
import {
  currentLineage,
  invokedOnce,
  type Lineage,
  LineageLedger,
  LOOP_LIMIT,
  traceHeader,
} from '../../../lib/local/lineage.ts';
import type { LocalEventSource } from '../../../lib/local/provision.ts';
import { type LoopDetection, QueuePoller } from '../../../lib/local/queue-poller.ts';

// What Lambda does and moto does not, as the poller models it when a test turns it on:
// recursive loop detection and the account's concurrency.

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/work';
const DLQ_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/work-dead-letters';
const sqs = mockClient(SQSClient);

const source: LocalEventSource = {
  functionId: 'Worker',
  kind: 'sqs',
  sourceArn: 'arn:aws:sqs:us-east-1:123456789012:work',
  batchSize: 5,
  maxConcurrency: 2,
  reportBatchItemFailures: true,
  filters: [],
  bisectOnError: false,
  maxRetries: 0,
};

/** A chain that has invoked the worker `hops` times. */
function chainOf(hops: number): Lineage {
  let lineage: Lineage = {};
  for (let hop = 0; hop < hops; hop++) lineage = invokedOnce(lineage, 'Worker');
  return lineage;
}

describe('QueuePoller, as Lambda', () => {
  let poller: QueuePoller | undefined;
  let queued: Array<{ id: string; lineage: Lineage }>;

  beforeEach(() => {
    sqs.reset();
    queued = [];
    sqs.on(ReceiveMessageCommand).callsFake(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const batch = queued.splice(0, 5);
      return {
        Messages: batch.map(({ id, lineage }) => ({
          MessageId: id,
          ReceiptHandle: id,
          Body: `body of ${id}`,
          Attributes: { AWSTraceHeader: traceHeader(lineage) },
        })),
      };
    });
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    sqs.on(SendMessageCommand).resolves({ MessageId: 'moved' });
  });

  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });

  const start = (
    invoke: (event: { Records: Array<{ messageId: string }> }) => Promise<unknown>,
    options: { loops?: LoopDetection; account?: AccountConcurrency; concurrency?: number } = {},
  ) => {
    poller = new QueuePoller({
      sqs: new SQSClient({ region: 'us-east-1' }),
      source,
      queueUrl: QUEUE_URL,
      invoke: invoke as never,
      region: 'us-east-1',
      visibilityTimeoutSeconds: 1,
      ...options,
    });
    poller.start();
  };

  const deleted = () =>
    sqs
      .commandCalls(DeleteMessageBatchCommand)
      .flatMap((call) => call.args[0].input.Entries?.map((entry) => entry.ReceiptHandle));

  it(`with Terminate, moves a message past ${LOOP_LIMIT} hops to the dead-letter queue`, async () => {
    // Prepare: one chain at the limit, one a hop below it
    queued = [
      { id: 'looped', lineage: chainOf(LOOP_LIMIT) },
      { id: 'below', lineage: chainOf(LOOP_LIMIT - 1) },
    ];
    const invoked: string[] = [];
    const lineages: Array<Lineage | undefined> = [];
    const loops = { ledger: new LineageLedger(), terminate: true, deadLetterUrl: DLQ_URL };

    // Act
    start(
      async (event) => {
        invoked.push(...event.Records.map((record) => record.messageId));
        lineages.push(currentLineage());
        return { batchItemFailures: [] };
      },
      { loops },
    );
    await vi.waitFor(() => expect(deleted()).toHaveLength(2));

    // Assess: the function never saw it; the message is in the dead-letter queue, not the queue
    expect(invoked).toEqual(['below']);
    expect(lineages).toEqual([chainOf(LOOP_LIMIT - 1)]);
    const moved = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(moved).toEqual([{ QueueUrl: DLQ_URL, MessageBody: 'body of looped' }]);
    expect(deleted().sort()).toEqual(['below', 'looped']);
  });

  it('with Allow, invokes the function however long the chain', async () => {
    queued = [{ id: 'looped', lineage: chainOf(LOOP_LIMIT * 2) }];
    const invoked: string[] = [];
    start(
      async (event) => {
        invoked.push(...event.Records.map((record) => record.messageId));
        return { batchItemFailures: [] };
      },
      { loops: { ledger: new LineageLedger(), terminate: false, deadLetterUrl: DLQ_URL } },
    );

    await vi.waitFor(() => expect(deleted()).toEqual(['looped']));

    expect(invoked).toEqual(['looped']);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it('leaves a batch the account has no room for to come back, uninvoked', async () => {
    // Prepare: the account's only slot is taken by another function for the whole test
    const account = new AccountConcurrency(1);
    const held = account.tryAcquire();
    queued = [{ id: 'm0', lineage: {} }];
    let invoked = 0;

    // Act
    start(
      async () => {
        invoked++;
        return { batchItemFailures: [] };
      },
      { account, concurrency: 1 },
    );
    // The one poller retries the batch until its visibility timeout (1 s) runs out, then
    // receives again.
    await vi.waitFor(
      () => expect(sqs.commandCalls(ReceiveMessageCommand).length).toBeGreaterThan(1),
      {
        timeout: 5000,
      },
    );
    await poller?.stop();
    poller = undefined;
    held?.();

    // Assess
    expect(invoked).toBe(0);
    expect(account.throttles).toBeGreaterThan(1);
    expect(deleted()).toEqual([]);
  });
});
