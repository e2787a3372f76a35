import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalEventSource } from '../../../lib/local/provision.ts';
import { QueuePoller } from '../../../lib/local/queue-poller.ts';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/work';
const sqs = mockClient(SQSClient);

const source: LocalEventSource = {
  functionId: 'Worker',
  kind: 'sqs',
  sourceArn: 'arn:aws:sqs:us-east-1:123456789012:work',
  batchSize: 5,
  maxConcurrency: 5,
  reportBatchItemFailures: true,
  filters: [],
  bisectOnError: false,
  maxRetries: 0,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('QueuePoller', () => {
  let poller: QueuePoller | undefined;
  let inFlight = 0;
  let mostInFlight = 0;
  let receives = 0;
  let queued: string[] = [];

  beforeEach(() => {
    sqs.reset();
    inFlight = 0;
    mostInFlight = 0;
    receives = 0;
    queued = Array.from({ length: 12 }, (_, index) => `m${index}`);
    // A long poll: answers what is queued, or nothing after a while.
    sqs.on(ReceiveMessageCommand).callsFake(async (input: { MaxNumberOfMessages: number }) => {
      receives++;
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await sleep(queued.length > 0 ? 5 : 50);
      inFlight--;
      const batch = queued.splice(0, input.MaxNumberOfMessages);
      return {
        Messages: batch.map((id) => ({ MessageId: id, ReceiptHandle: id, Body: '{}' })),
      };
    });
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  });

  afterEach(async () => {
    await poller?.stop();
  });

  const start = (invoke: (event: unknown) => Promise<unknown>) => {
    poller = new QueuePoller({
      sqs: new SQSClient({ region: 'us-east-1' }),
      source,
      queueUrl: QUEUE_URL,
      invoke,
      region: 'us-east-1',
    });
    poller.start();
  };

  it('has one receive in flight at a time, and invocations run side by side', async () => {
    let running = 0;
    let mostRunning = 0;
    const invoked: string[] = [];
    start(async (event) => {
      running++;
      mostRunning = Math.max(mostRunning, running);
      invoked.push(
        ...(event as { Records: Array<{ messageId: string }> }).Records.map((r) => r.messageId),
      );
      await sleep(100);
      running--;
      return { batchItemFailures: [] };
    });

    await vi.waitFor(() => expect(sqs.commandCalls(DeleteMessageBatchCommand)).toHaveLength(3), {
      timeout: 2000,
    });

    expect(invoked).toHaveLength(12);
    expect(mostInFlight).toBe(1);
    expect(mostRunning).toBeGreaterThan(1);
  });

  it('stops promptly: pollers waiting for their turn do not receive', async () => {
    queued = [];
    start(async () => ({ batchItemFailures: [] }));
    await vi.waitFor(() => expect(receives).toBeGreaterThan(0));

    // Every poller but the one receiving waits for its turn; none of them receives once stopped.
    const receivedBefore = receives;
    await poller?.stop();
    poller = undefined;

    expect(receives).toBe(receivedBefore);
  });

  it.each([
    ['not a messageId of the batch', [{ itemIdentifier: 'bogus' }]],
    ['empty', [{ itemIdentifier: '' }]],
    ['null', [{ itemIdentifier: null }]],
    ['missing', [{}]],
    ['not a string', [{ itemIdentifier: 7 }]],
    ['next to a valid one but unknown', [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm9' }]],
  ])('deletes no message when an itemIdentifier is %s', async (_, batchItemFailures) => {
    // Arrange: one batch of three
    queued = ['m0', 'm1', 'm2'];
    let invoked = 0;
    start(async () => {
      invoked++;
      return { batchItemFailures };
    });

    // Act
    await vi.waitFor(() => expect(invoked).toBe(1));
    await poller?.stop();
    poller = undefined;

    // Assess: AWS treats the batch as a complete failure, so every message comes back
    expect(sqs.commandCalls(DeleteMessageBatchCommand)).toHaveLength(0);
  });

  it('deletes the messages a valid partial batch response does not name', async () => {
    queued = ['m0', 'm1', 'm2'];
    let invoked = 0;
    start(async () => {
      invoked++;
      return { batchItemFailures: [{ itemIdentifier: 'm1' }] };
    });

    await vi.waitFor(() => expect(invoked).toBe(1));
    await poller?.stop();
    poller = undefined;

    const deletes = sqs.commandCalls(DeleteMessageBatchCommand);
    expect(
      deletes.flatMap((call) => call.args[0].input.Entries?.map((e) => e.ReceiptHandle)),
    ).toEqual(['m0', 'm2']);
  });
});
