import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  fenced,
  finalizeMessage,
  ok,
  pageMessage,
  type WorkMessage,
} from '../../../lib/core/index.ts';
import { createWorkerHandler, workerHandler } from '../../../lib/lambda/worker.ts';
import { PageWorker, type WorkOutcome } from '../../../lib/pipeline/index.ts';
import { createClients, ENV } from '../../../lib/support/index.ts';
import { sqsEvent, sqsRecord } from '../../helpers/events.ts';
import { aChain, CHAIN_ID, DELETION_ID, TABLE } from '../../helpers/records.ts';
import { capturedOutput, capturedTelemetry, quietTelemetry } from '../../helpers/telemetry.ts';

const s3 = mockClient(S3Client);
const table = mockClient(DynamoDBDocumentClient);
const OTHER_ID = '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';
const fence = { tenant: 'acme', deletionId: DELETION_ID, generation: 3, round: 1 };
/** An SQS record `m<n>` holding page `n` of the test chain; page 99 fails in `workerWith`. */
const page = (n: number, deletionId = DELETION_ID, stream?: string) =>
  sqsRecord(
    `m${n}`,
    JSON.stringify(pageMessage({ ...fence, deletionId, chainId: CHAIN_ID, stream }, n)),
  );
const deleted = (
  objects: number,
  extra: { failures?: number; retriedKeys?: number } = {},
): WorkOutcome => ({
  outcome: 'deleted',
  objects,
  bytes: objects * 100,
  failures: 0,
  retriedKeys: 0,
  ...extra,
});
/** Records are processed concurrently: the order of the failures carries no meaning. */
const failedIds = (response: SQSBatchResponse) =>
  response.batchItemFailures.map((failure) => failure.itemIdentifier).sort();

beforeEach(() => {
  s3.reset();
  table.reset();
});

/** A worker whose outcome for each page number is given; page 99 fails. */
const workerWith = (outcomes: Record<number, WorkOutcome>, delayMs = 0) => ({
  handle: vi.fn<PageWorker['handle']>(async (message: WorkMessage) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (message.type === 'page' && message.page === 99) throw new Error('S3 is unreachable');
    return (message.type === 'page' && outcomes[message.page]) || { outcome: 'stale' };
  }),
});

describe('workerHandler, a batch', () => {
  it('reports exactly the messages that failed or could not be parsed', async () => {
    // Prepare
    const handler = workerHandler(workerWith({}), quietTelemetry());

    // Act
    const response = await handler(
      sqsEvent(page(1), page(99), sqsRecord('m3', '{not json'), page(4)),
    );

    // Assess
    expect(failedIds(response)).toEqual(['m3', 'm99']);
  });

  it('hands every parseable message to the worker, and no unparseable one', async () => {
    // Prepare
    const worker = workerWith({});
    const handler = workerHandler(worker, quietTelemetry());

    // Act
    await handler(sqsEvent(page(1), sqsRecord('m3', '{"v":2}')));

    // Assess
    expect(worker.handle.mock.calls).toEqual([[JSON.parse(page(1).body)]]);
  });

  it('reports no failures when every message succeeds', async () => {
    // Prepare
    const handler = workerHandler(workerWith({}), quietTelemetry());

    // Act
    const response = await handler(sqsEvent(page(1), page(4)));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
  });
});

describe('workerHandler, metrics (EMF)', () => {
  let captured: ReturnType<typeof capturedTelemetry>;
  beforeEach(() => {
    captured = capturedTelemetry();
  });
  afterEach(() => captured.restore());

  it("publishes one document per invocation with the batch's sums", async () => {
    // Prepare
    const handler = workerHandler(
      workerWith({
        1: deleted(1000, { failures: 2, retriedKeys: 5 }),
        2: deleted(250, { retriedKeys: 1 }),
        3: { outcome: 'duplicate' },
      }),
      captured.telemetry,
    );

    // Act
    await handler(sqsEvent(page(1), page(2), page(3), page(99)));

    // Assess
    expect(captured.metrics()).toEqual([
      {
        PagesDeleted: 2,
        ObjectsDeleted: 1250,
        BytesDeleted: 125_000,
        KeysFailed: 2,
        KeysRetried: 6,
      },
    ]);
  });

  it('declares each metric with its CloudWatch unit', async () => {
    // Prepare
    const handler = workerHandler(workerWith({ 1: deleted(10) }), captured.telemetry);

    // Act
    await handler(sqsEvent(page(1)));

    // Assess
    const aws = captured.emf()[0]?._aws as { CloudWatchMetrics: { Metrics: object[] }[] };
    expect(aws.CloudWatchMetrics[0]?.Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'ObjectsDeleted', Unit: 'Count' },
        { Name: 'BytesDeleted', Unit: 'Bytes' },
        { Name: 'PagesDeleted', Unit: 'Count' },
      ]),
    );
  });

  it('counts the pages sent back to wait for the key budget', async () => {
    // Prepare
    const handler = workerHandler(
      workerWith({
        1: { outcome: 'deferred', seconds: 3 },
        2: { outcome: 'deferred', seconds: 1 },
      }),
      captured.telemetry,
    );

    // Act
    await handler(sqsEvent(page(1), page(2)));

    // Assess
    expect(captured.metrics()).toEqual([{ PagesDeferred: 2 }]);
  });

  it('counts the pages S3 refused with SlowDown, apart from those deferred', async () => {
    // Prepare
    const handler = workerHandler(
      workerWith({
        1: { outcome: 'slowed', seconds: 1, pace: 850 },
        2: { outcome: 'deferred', seconds: 1 },
      }),
      captured.telemetry,
    );

    // Act
    await handler(sqsEvent(page(1), page(2)));

    // Assess
    expect(captured.metrics()).toEqual([{ PagesSlowedDown: 1, PagesDeferred: 1 }]);
  });

  it('publishes nothing for a batch that deleted nothing', async () => {
    // Prepare
    const handler = workerHandler(workerWith({ 1: { outcome: 'stale' } }), captured.telemetry);

    // Act
    await handler(sqsEvent(page(1), page(99)));

    // Assess
    expect(captured.emf()).toEqual([]);
  });

  it('keeps invocations that run at the same time apart', async () => {
    // Prepare: the slow invocation starts first and ends last.
    const slow = workerHandler(workerWith({ 1: deleted(7) }, 30), captured.telemetry);
    const fast = workerHandler(workerWith({ 1: deleted(500) }, 1), captured.telemetry);

    // Act
    await Promise.all([slow(sqsEvent(page(1))), fast(sqsEvent(page(1), page(1)))]);

    // Assess
    expect(captured.metrics().map((metrics) => metrics.ObjectsDeleted)).toEqual([1000, 7]);
  });
});

describe('workerHandler, log lines', () => {
  let captured: ReturnType<typeof capturedTelemetry>;
  beforeEach(() => {
    captured = capturedTelemetry();
  });
  afterEach(() => captured.restore());

  it('name the deletion of each record on every line, failures included', async () => {
    // Prepare
    const handler = workerHandler(workerWith({ 1: deleted(1) }), captured.telemetry);

    // Act
    await handler(sqsEvent(page(1), page(99, OTHER_ID)));

    // Assess
    const byMessage = Object.fromEntries(captured.logs().map((line) => [line.message, line]));
    expect(Object.keys(byMessage).sort()).toEqual([
      'work done',
      'work failed; the message will be redelivered',
    ]);
    expect(byMessage['work done']).toMatchObject({
      deletionId: DELETION_ID,
      tenant: 'acme',
      generation: 3,
    });
    expect(byMessage['work failed; the message will be redelivered']).toMatchObject({
      deletionId: OTHER_ID,
      tenant: 'acme',
      generation: 3,
      error: 'S3 is unreachable',
    });
  });

  it('name the stream the message names', async () => {
    // Prepare
    const handler = workerHandler(workerWith({ 1: { outcome: 'duplicate' } }), captured.telemetry);

    // Act
    await handler(sqsEvent(page(1, DELETION_ID, 'clicks')));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({ message: 'work done', stream: 'clicks', generation: 3 }),
    ]);
  });

  it('carry the Lambda request id of their invocation', async () => {
    // Prepare
    const handler = workerHandler(workerWith({ 1: deleted(1) }), captured.telemetry);
    const context = (awsRequestId: string): Context => ({
      callbackWaitsForEmptyEventLoop: true,
      functionName: 'lethe-worker',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:lethe-worker',
      memoryLimitInMB: '512',
      awsRequestId,
      logGroupName: '/aws/lambda/lethe-worker',
      logStreamName: '2026/03/01/[$LATEST]0123456789abcdef',
      getRemainingTimeInMillis: () => 30_000,
      done: () => {},
      fail: () => {},
      succeed: () => {},
    });

    // Act
    await handler(sqsEvent(page(1)), context('req-1'));
    await handler(sqsEvent(page(1)), context('req-2'));

    // Assess
    expect(captured.logs().map((line) => line.function_request_id)).toEqual(['req-1', 'req-2']);
  });

  it('name the stream on the failure of a page', async () => {
    // Prepare: the real page worker reads the chain (which names its stream), then S3 fails.
    s3.on(ListObjectsV2Command).rejects(new Error('S3 is unreachable'));
    const worker = new PageWorker({
      chains: {
        get: async () => aChain({ stream: 'clicks', generation: 3 }),
        recordListing: async (chain) => ok(chain),
        completePage: async (chain) => ok(chain),
        slowDown: async () => ({ ok: true }),
        takeSlot: async (chain) => chain,
        split: async () => fenced(),
        markIndivisible: async () => {},
      },
      deletions: { get: async () => undefined },
      failures: { record: async () => {} },
      fence: { isRunning: async () => true },
      s3: new S3Client({ region: 'us-east-1' }),
      deleter: {
        deletePage: async () => ({
          objects: 0,
          bytes: 0,
          failures: [],
          failedObjects: 0,
          failedBytes: 0,
          retriedKeys: 0,
          markersLaid: 0,
          markersLaidBytes: 0,
          nullMarkers: [],
        }),
      },
      queue: { send: async () => {} },
      finalizer: { finalize: async () => 'completed', settle: async () => 'not-ready' },
    });

    // Act
    await workerHandler(worker, captured.telemetry)(sqsEvent(page(0, DELETION_ID, 'clicks')));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'work failed; the message will be redelivered',
        deletionId: DELETION_ID,
        stream: 'clicks',
        error: 'S3 is unreachable',
      }),
    ]);
  });
});

describe('createWorkerHandler', () => {
  let output: ReturnType<typeof capturedOutput>;
  beforeEach(() => {
    output = capturedOutput();
  });
  afterEach(() => output.restore());

  const env = {
    [ENV.tableName]: TABLE,
    [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/lethe-work',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };

  it("reads the message's deletion from the table it is configured with", async () => {
    // Prepare
    table.on(GetCommand).resolves({});
    const handler = createWorkerHandler(env, createClients());

    // Act
    const response = await handler(
      sqsEvent(sqsRecord('m1', JSON.stringify(finalizeMessage({ ...fence })))),
    );

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(table.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      TableName: TABLE,
      ConsistentRead: true,
    });
  });

  it('logs a finalize message for a deletion that is gone as stale', async () => {
    // Prepare
    table.on(GetCommand).resolves({});
    const handler = createWorkerHandler(env, createClients());

    // Act
    await handler(sqsEvent(sqsRecord('m1', JSON.stringify(finalizeMessage({ ...fence })))));

    // Assess
    expect(output.logs()).toEqual([
      expect.objectContaining({
        message: 'work done',
        service: 'lethe-worker',
        outcome: 'stale',
        deletionId: DELETION_ID,
      }),
    ]);
  });
});
