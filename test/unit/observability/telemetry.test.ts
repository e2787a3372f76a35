import { Readable } from 'node:stream';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishesMetrics } from '../../functions/runtime.ts';
import type { HttpHandler } from '../../lib/api/http-api.ts';
import type { Dispatcher } from '../../lib/dispatch.ts';
import {
  apiHandler,
  dispatcherHandler,
  sweeperHandler,
  workerHandler,
} from '../../lib/handlers.ts';
import type { WorkMessage } from '../../lib/messages.ts';
import { countRetries, type Telemetry } from '../../lib/observability.ts';
import { ObservedProgressStore } from '../../lib/observed-progress.ts';
import type { PageWorker, WorkOutcome } from '../../lib/page-worker.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import type { Sweeper } from '../../lib/sweeper.ts';
import { documentClient } from '../../lib/table.ts';
import { apiEvent, sqsEvent, sqsRecord, streamEvent, streamInsert } from '../helpers/events.ts';
import { fake } from '../helpers/fakes.ts';
import { aDeletion, CHAIN_ID, DELETION_ID, NOW, TABLE } from '../helpers/records.ts';
import { capturedTelemetry } from '../helpers/telemetry.ts';

const table = mockClient(DynamoDBDocumentClient);
const fence = { v: 1, tenant: 'acme', deletionId: DELETION_ID, generation: 3, round: 1 } as const;
const page = (n: number, deletionId = DELETION_ID) =>
  sqsRecord(
    `m${n}`,
    JSON.stringify({ ...fence, deletionId, type: 'page', chainId: CHAIN_ID, page: n }),
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

let captured: ReturnType<typeof capturedTelemetry>;
beforeEach(() => {
  table.reset();
  captured = capturedTelemetry();
});
afterEach(() => captured.restore());

/** The metric values of one EMF document, by name, checked against its own declaration. */
function metricsOf(document: Record<string, unknown>) {
  const aws = document._aws as {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
  };
  const [directive] = aws.CloudWatchMetrics;
  expect(directive?.Namespace).toBe('Lethe');
  expect(directive?.Dimensions).toEqual([['service']]);
  expect(document.service).toBe('lethe');
  return Object.fromEntries(
    (directive?.Metrics ?? []).map(({ Name }) => [Name, document[Name]] as const),
  );
}

/** A worker whose outcome for each page number is given; page 99 fails. */
const workerWith = (outcomes: Record<number, WorkOutcome>, delayMs = 0) =>
  fake<PageWorker>({
    handle: async (message: WorkMessage) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (message.type === 'page' && message.page === 99) throw new Error('S3 is unreachable');
      return (message.type === 'page' && outcomes[message.page]) || { outcome: 'stale' };
    },
  });

describe('worker metrics (EMF)', () => {
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
    expect(captured.emf().map(metricsOf)).toEqual([
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
    expect(captured.emf().map((document) => metricsOf(document).ObjectsDeleted)).toEqual([1000, 7]);
  });
});

describe('log lines', () => {
  it('name the deletion of each record on every line, failures included', async () => {
    // Prepare
    const other = '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';
    const handler = workerHandler(workerWith({ 1: deleted(1) }), captured.telemetry);

    // Act
    await handler(sqsEvent(page(1), page(99, other)));

    // Assess
    const lines = captured.logs();
    expect(lines.map((line) => line.message).sort()).toEqual([
      'work done',
      'work failed; the message will be redelivered',
    ]);
    const byMessage = Object.fromEntries(lines.map((line) => [line.message, line]));
    expect(byMessage['work done']).toMatchObject({
      deletionId: DELETION_ID,
      tenant: 'acme',
      generation: 3,
    });
    expect(byMessage['work failed; the message will be redelivered']).toMatchObject({
      deletionId: other,
      tenant: 'acme',
      generation: 3,
    });
  });

  it('add the stream once the deletion has been read', async () => {
    // Prepare
    table.on(GetCommand).resolves({ Item: aDeletion({ stream: 'clicks', generation: 3 }) });
    const store = new ObservedProgressStore({
      tableName: TABLE,
      client: documentClient(new DynamoDBClient({ region: 'us-east-1' })),
    });
    const worker = fake<PageWorker>({
      handle: async (message: WorkMessage) => {
        await store.getDeletion(message.tenant, message.deletionId);
        return { outcome: 'duplicate' };
      },
    });

    // Act
    await workerHandler(worker, captured.telemetry)(sqsEvent(page(1)));

    // Assess
    expect(captured.logs()).toEqual([expect.objectContaining({ stream: 'clicks', generation: 3 })]);
  });

  it('carry the Lambda request id of their invocation', async () => {
    // Prepare
    const handler = workerHandler(workerWith({ 1: deleted(1) }), captured.telemetry);
    const context = (awsRequestId: string) =>
      ({ awsRequestId, functionName: 'lethe-worker', memoryLimitInMB: '512' }) as Context;

    // Act
    await handler(sqsEvent(page(1)), context('req-1'));
    await handler(sqsEvent(page(1)), context('req-2'));

    // Assess
    expect(captured.logs().map((line) => line.function_request_id)).toEqual(['req-1', 'req-2']);
  });

  it('name the stream on the failure of a message whose deletion was read', async () => {
    // Prepare
    table.on(GetCommand).resolves({ Item: aDeletion({ stream: 'clicks', generation: 3 }) });
    const store = new ObservedProgressStore({
      tableName: TABLE,
      client: documentClient(new DynamoDBClient({ region: 'us-east-1' })),
    });
    const worker = fake<PageWorker>({
      handle: async (message: WorkMessage) => {
        await store.getDeletion(message.tenant, message.deletionId);
        throw new Error('S3 is unreachable');
      },
    });

    // Act
    await workerHandler(worker, captured.telemetry)(sqsEvent(page(1)));

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

  it('name the deletion on the failure of a dispatch', async () => {
    // Prepare
    const handler = dispatcherHandler(
      fake<Dispatcher>({
        dispatch: async () => {
          throw new Error('DynamoDB is unreachable');
        },
      }),
      captured.telemetry,
    );

    // Act
    await handler(streamEvent(streamInsert('1', aDeletion({ state: 'PENDING' }))));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'dispatch failed; the record will be retried',
        deletionId: DELETION_ID,
        stream: 'logs',
        sequenceNumber: '1',
      }),
    ]);
  });

  it('carry tenant, stream and generation from a dispatched stream record', async () => {
    // Prepare
    const handler = dispatcherHandler(
      fake<Dispatcher>({ dispatch: async () => 'dispatched' }),
      captured.telemetry,
    );

    // Act
    await handler(streamEvent(streamInsert('1', aDeletion({ state: 'PENDING', generation: 4 }))));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'dispatched',
        deletionId: DELETION_ID,
        tenant: 'acme',
        stream: 'logs',
        generation: 4,
      }),
    ]);
  });

  it("carry the api request's tenant and stream, and the deletion it answered", async () => {
    // Prepare
    const body = { deletionId: DELETION_ID, generation: 2, state: 'PENDING' };
    const api: HttpHandler = async () => ({ statusCode: 202, body: JSON.stringify(body) });
    const event = apiEvent({
      method: 'DELETE',
      resource: '/v1/tenants/{tenant}/streams/{stream}',
      pathParameters: { tenant: 'acme', stream: 'logs' },
    });

    // Act
    await apiHandler(api, captured.telemetry)(event);

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        level: 'INFO',
        tenant: 'acme',
        stream: 'logs',
        deletionId: DELETION_ID,
        generation: 2,
        status: 202,
      }),
    ]);
  });

  it('log an api 5xx as an error', async () => {
    // Prepare
    const api: HttpHandler = async () => ({ statusCode: 500, body: '{"error":{}}' });

    // Act
    await apiHandler(api, captured.telemetry)(apiEvent({ method: 'GET', resource: '/v1/health' }));

    // Assess
    expect(captured.logs()).toEqual([expect.objectContaining({ level: 'ERROR', status: 500 })]);
  });
});

describe('deletion outcomes (ObservedProgressStore)', () => {
  const store = () =>
    new ObservedProgressStore({
      tableName: TABLE,
      client: documentClient(new DynamoDBClient({ region: 'us-east-1' })),
      now: () => NOW,
    });
  /** Runs `act` as one invocation of a function and returns the metrics it published. */
  const invocation = async (telemetry: Telemetry, act: () => Promise<unknown>) => {
    await telemetry.invocation(undefined, {}, act);
    return captured.emf().map(metricsOf);
  };
  const requestedAt = new Date(NOW.getTime() - 90_000).toISOString();

  it('counts a completion and its duration from the request', async () => {
    // Prepare
    table.on(TransactWriteCommand).resolves({});

    // Act
    const metrics = await invocation(captured.telemetry, () =>
      store().complete(aDeletion({ requestedAt })),
    );

    // Assess
    expect(metrics).toEqual([{ DeletionsCompleted: 1, DeletionDuration: 90 }]);
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'deletion completed',
        stream: 'logs',
        durationSeconds: 90,
      }),
    ]);
  });

  it('counts nothing when the completion was fenced (another run completed it)', async () => {
    // Prepare
    table.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
      }),
    );

    // Act
    const metrics = await invocation(captured.telemetry, () => store().complete(aDeletion()));

    // Assess
    expect(metrics).toEqual([]);
  });

  it('counts a failure', async () => {
    // Prepare
    table.on(TransactWriteCommand).resolves({});

    // Act
    const metrics = await invocation(captured.telemetry, () =>
      store().fail(aDeletion(), { code: 'Stalled', message: 'no progress' }),
    );

    // Assess
    expect(metrics).toEqual([{ DeletionsFailed: 1 }]);
  });
});

describe('sweeper', () => {
  const sweeper = fake<Sweeper>({
    sweep: async () => ({ stale: 0, resumed: 0, failed: 0, messages: 0 }),
  });
  const storeWith = (...requested: string[]) =>
    fake<ProgressStore>({
      stale: async function* () {
        for (const [index, requestedAt] of requested.entries()) {
          yield aDeletion({ deletionId: `${index}`, requestedAt });
        }
      },
    });

  it('reports the age of the oldest open deletion', async () => {
    // Prepare
    const store = storeWith('2026-03-01T11:00:00.000Z', '2026-03-01T09:00:00.000Z');

    // Act
    await sweeperHandler(sweeper, store, captured.telemetry, () => NOW)();

    // Assess
    expect(captured.emf().map(metricsOf)).toEqual([{ OldestDeletionAge: 3 * 3600 }]);
  });

  it('reports 0 when no deletion is open', async () => {
    // Act
    await sweeperHandler(sweeper, storeWith(), captured.telemetry, () => NOW)();

    // Assess
    expect(captured.emf().map(metricsOf)).toEqual([{ OldestDeletionAge: 0 }]);
  });

  it('reports the age even when the sweep fails', async () => {
    // Prepare
    const failing = fake<Sweeper>({
      sweep: async () => {
        throw new Error('DynamoDB is unreachable');
      },
    });
    const handler = sweeperHandler(
      failing,
      storeWith('2026-03-01T11:59:00.000Z'),
      captured.telemetry,
      () => NOW,
    );

    // Act
    await expect(handler()).rejects.toThrow('unreachable');

    // Assess
    expect(captured.emf().map(metricsOf)).toEqual([{ OldestDeletionAge: 60 }]);
  });
});

describe('countRetries', () => {
  /** An S3 client whose HTTP layer answers these status codes in turn, without a network. */
  const s3Answering = (...statuses: number[]) => {
    const client = new S3Client({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 3,
      requestHandler: {
        handle: async () => ({
          response: {
            statusCode: statuses.shift() ?? 200,
            headers: {},
            body: Readable.from([]),
          },
        }),
      },
    });
    countRetries(client);
    return client;
  };

  it("counts the SDK's retries of a request that succeeded", async () => {
    // Prepare
    const client = s3Answering(503, 503, 200);

    // Act
    await captured.telemetry.invocation(undefined, {}, () =>
      client.send(new HeadBucketCommand({ Bucket: 'data' })),
    );

    // Assess
    expect(captured.emf().map(metricsOf)).toEqual([{ RequestsRetried: 2 }]);
  });

  it('counts the retries of a request that failed after all of them', async () => {
    // Prepare
    const client = s3Answering(503, 503, 503);

    // Act
    const call = captured.telemetry.invocation(undefined, {}, () =>
      client.send(new HeadBucketCommand({ Bucket: 'data' })),
    );

    // Assess
    await expect(call).rejects.toThrow();
    expect(captured.emf().map(metricsOf)).toEqual([{ RequestsRetried: 2 }]);
  });

  it('counts nothing for a request answered at once', async () => {
    // Prepare
    const client = s3Answering(200);

    // Act
    await captured.telemetry.invocation(undefined, {}, () =>
      client.send(new HeadBucketCommand({ Bucket: 'data' })),
    );

    // Assess
    expect(captured.emf()).toEqual([]);
  });
});

describe('publishesMetrics', () => {
  it.each([
    { env: {}, expected: true },
    { env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' }, expected: false },
    {
      env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000', POWERTOOLS_METRICS_DISABLED: 'false' },
      expected: true,
    },
    { env: { POWERTOOLS_METRICS_DISABLED: 'true' }, expected: false },
  ])('is $expected with $env', ({ env, expected }) => {
    // Assess
    expect(publishesMetrics(env)).toBe(expected);
  });
});
