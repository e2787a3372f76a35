import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  carryLineage,
  invokedOnce,
  LineageLedger,
  LOOP_LIMIT,
  lineageKey,
  merged,
  parseLineage,
  pastLimit,
  runWithLineage,
  traceHeader,
} from '../../../lib/local/lineage.ts';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/work';

describe('lineage', () => {
  it('reads back the trace header it writes', () => {
    // Prepare
    const lineage = invokedOnce(invokedOnce(invokedOnce({}, 'Worker'), 'Worker'), 'Dispatcher');

    // Act
    const header = traceHeader(lineage);

    // Assess
    expect(header).toMatch(/;Lineage=[0-9a-f]{8}:2\|[0-9a-f]{8}:1$/);
    expect(parseLineage(header)).toEqual(lineage);
    expect(parseLineage(undefined)).toEqual({});
  });

  it(`stops the invocation after ${LOOP_LIMIT} of one function, not another's`, () => {
    // Prepare: a chain that has invoked the worker LOOP_LIMIT times
    let lineage = {};
    for (let hop = 0; hop < LOOP_LIMIT; hop++) lineage = invokedOnce(lineage, 'Worker');

    // Assess
    expect(pastLimit(lineage, 'Worker')).toBe(true);
    expect(pastLimit(lineage, 'Planner')).toBe(false);
    expect(pastLimit(invokedOnce({}, 'Worker'), 'Worker')).toBe(false);
  });

  it("merges a batch's lineages to the highest count of each function", () => {
    const [a, b] = [lineageKey('Worker'), lineageKey('Planner')];
    expect(merged([{ [a]: 3 }, { [a]: 5, [b]: 1 }])).toEqual({ [a]: 5, [b]: 1 });
  });
});

describe('carryLineage', () => {
  let ledger: LineageLedger;
  let client: SQSClient;
  let batches: SendMessageBatchCommandInput[];
  let singles: SendMessageCommandInput[];

  beforeEach(() => {
    batches = [];
    singles = [];
    ledger = new LineageLedger();
    client = new SQSClient({ region: 'us-east-1', md5: false });
    carryLineage(client, ledger);
    // SQS's answer, after every middleware of the client's own (the lineage's among them).
    client.middlewareStack.add(
      () => async (args) => {
        const input = args.input as SendMessageBatchCommandInput & SendMessageCommandInput;
        if (input.Entries) {
          batches.push(input);
          const Successful = input.Entries.map((entry, index) => ({
            Id: entry.Id,
            MessageId: ['a', 'b'][index],
          }));
          return { output: { Successful, $metadata: {} }, response: {} };
        }
        singles.push(input);
        return { output: { MessageId: 'one', $metadata: {} }, response: {} };
      },
      { step: 'initialize', priority: 'low', name: 'answer' },
    );
  });

  it("puts the invocation's lineage on each message sent, as AWSTraceHeader", async () => {
    // Prepare
    const lineage = invokedOnce({}, 'Worker');
    const entries = [
      { Id: '0', MessageBody: 'p2' },
      { Id: '1', MessageBody: 'p3' },
    ];

    // Act
    await runWithLineage(lineage, async () => {
      await client.send(new SendMessageBatchCommand({ QueueUrl: QUEUE_URL, Entries: entries }));
      await client.send(new SendMessageCommand({ QueueUrl: QUEUE_URL, MessageBody: 'p4' }));
    });

    // Assess
    const header = traceHeader(lineage);
    const sent = batches[0]?.Entries ?? [];
    expect(sent.map((entry) => entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue)).toEqual(
      [header, header],
    );
    expect(singles[0]?.MessageSystemAttributes?.AWSTraceHeader?.StringValue).toBe(header);
    for (const body of ['p2', 'p3', 'p4']) expect(ledger.of({ Body: body })).toEqual(lineage);
    // The caller's entries are left as they were.
    expect(entries[0]).toEqual({ Id: '0', MessageBody: 'p2' });
  });

  it('adds nothing to a send outside an invocation', async () => {
    // Act
    await client.send(new SendMessageCommand({ QueueUrl: QUEUE_URL, MessageBody: 'p1' }));

    // Assess
    expect(singles[0]?.MessageSystemAttributes).toBeUndefined();
    expect(ledger.of({ Body: 'p1' })).toEqual({});
  });

  it("reads a received message's AWSTraceHeader before the ledger", () => {
    const lineage = invokedOnce({}, 'Planner');
    ledger.record('m', traceHeader({}));
    expect(ledger.of({ Body: 'm', Attributes: { AWSTraceHeader: traceHeader(lineage) } })).toEqual(
      lineage,
    );
  });
});
