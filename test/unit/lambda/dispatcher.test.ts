import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBBatchResponse } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDispatcherHandler, dispatcherHandler } from '../../../lib/lambda/dispatcher.ts';
import type { Dispatcher } from '../../../lib/pipeline/index.ts';
import { createClients, ENV } from '../../../lib/support/index.ts';
import { streamEvent, streamInsert } from '../../helpers/events.ts';
import { aDeletion, aStream, DELETION_ID, TABLE } from '../../helpers/records.ts';
import { capturedOutput, capturedTelemetry, quietTelemetry } from '../../helpers/telemetry.ts';

const table = mockClient(DynamoDBDocumentClient);
const s3 = mockClient(S3Client);
const OFF = 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a';

/** Records are processed concurrently: the order of the failures carries no meaning. */
const failedIds = (response: DynamoDBBatchResponse) =>
  response.batchItemFailures.map((failure) => failure.itemIdentifier).sort();

const dispatching = () => ({
  dispatch: vi.fn<Dispatcher['dispatch']>(async () => ({ outcome: 'dispatched' })),
});

/** A PENDING deletion of round 2, a stream record and a record without an image. */
const mixedBatch = () =>
  streamEvent(
    streamInsert('100', aDeletion({ state: 'PENDING', round: 2 })),
    streamInsert('200', aStream()),
    streamInsert('300'),
  );

beforeEach(() => {
  table.reset();
  s3.reset();
});

describe('dispatcherHandler, a batch of stream records', () => {
  it('reports the sequence numbers of the records that are not a pending deletion as failed', async () => {
    // Prepare
    const handler = dispatcherHandler(dispatching(), quietTelemetry());

    // Act
    const response = await handler(mixedBatch());

    // Assess
    expect(failedIds(response)).toEqual(['200', '300']);
  });

  it('dispatches the pending deletion of the good record, by its reference and as its image shows it', async () => {
    // Prepare
    const dispatcher = dispatching();
    const handler = dispatcherHandler(dispatcher, quietTelemetry());

    // Act
    await handler(mixedBatch());

    // Assess: the image is the deletion's item, so the dispatcher need not read it.
    expect(dispatcher.dispatch.mock.calls).toEqual([
      [
        { tenant: 'acme', deletionId: DELETION_ID, round: 2 },
        aDeletion({ state: 'PENDING', round: 2 }),
      ],
    ]);
  });

  it("counts a COMPLETED deletion towards its tenant's offboarding, and does not dispatch it", async () => {
    // Prepare
    const dispatcher = dispatching();
    const offboarder = {
      fanOut: vi.fn(),
      deletionCompleted: vi.fn(async () => 'running' as const),
    };
    const handler = dispatcherHandler(dispatcher, quietTelemetry(), undefined, offboarder);

    // Act
    const response = await handler(
      streamEvent(
        streamInsert('1', aDeletion({ state: 'COMPLETED', stream: 'logs', offboardingId: OFF })),
      ),
    );

    // Assess
    expect(failedIds(response)).toEqual([]);
    expect(dispatcher.dispatch).not.toHaveBeenCalled();
    expect(offboarder.deletionCompleted.mock.calls).toEqual([
      [{ tenant: 'acme', stream: 'logs', deletionId: DELETION_ID, offboardingId: OFF }],
    ]);
  });

  it('counts an offboarding completed by the last of its deletions, or by its last fan-out step', async () => {
    // Prepare
    const captured = capturedTelemetry();
    const offboarder = {
      fanOut: vi.fn(async () => 'completed' as const),
      deletionCompleted: vi.fn(async () => 'completed' as const),
    };
    const handler = dispatcherHandler(dispatching(), captured.telemetry, undefined, offboarder);
    const step = {
      type: 'OFFBOARDING',
      tenant: 'acme',
      offboardingId: OFF,
      state: 'RUNNING',
      fannedOut: false,
    };

    // Act
    try {
      await handler(
        streamEvent(
          streamInsert('1', aDeletion({ state: 'COMPLETED', stream: 'logs', offboardingId: OFF })),
        ),
      );
      await handler(streamEvent(streamInsert('2', step as never)));
    } finally {
      captured.restore();
    }

    // Assess
    expect(captured.metrics()).toEqual([
      expect.objectContaining({ OffboardingsCompleted: 1 }),
      expect.objectContaining({ OffboardingsCompleted: 1 }),
    ]);
  });

  it.each(['RUNNING', 'COMPLETED'] as const)('does not dispatch a %s deletion', async (state) => {
    // Prepare
    const dispatcher = dispatching();
    const handler = dispatcherHandler(dispatcher, quietTelemetry());

    // Act
    const response = await handler(streamEvent(streamInsert('1', aDeletion({ state }))));

    // Assess
    expect(dispatcher.dispatch).not.toHaveBeenCalled();
    expect(failedIds(response)).toEqual(['1']);
  });

  it('reports a record whose dispatch failed, so Lambda retries it', async () => {
    // Prepare
    const dispatcher = dispatching();
    dispatcher.dispatch.mockRejectedValue(new Error('DynamoDB is unreachable'));
    const handler = dispatcherHandler(dispatcher, quietTelemetry());

    // Act
    const response = await handler(streamEvent(streamInsert('1', aDeletion({ state: 'PENDING' }))));

    // Assess
    expect(failedIds(response)).toEqual(['1']);
  });
});

describe('dispatcherHandler, log lines', () => {
  let captured: ReturnType<typeof capturedTelemetry>;
  beforeEach(() => {
    captured = capturedTelemetry();
  });
  afterEach(() => captured.restore());

  it('name the deletion on the failure of a dispatch', async () => {
    // Prepare
    const dispatcher = dispatching();
    dispatcher.dispatch.mockRejectedValue(new Error('DynamoDB is unreachable'));
    const handler = dispatcherHandler(dispatcher, captured.telemetry);

    // Act
    await handler(streamEvent(streamInsert('1', aDeletion({ state: 'PENDING' }))));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'dispatch failed; the record will be retried',
        deletionId: DELETION_ID,
        stream: 'logs',
        sequenceNumber: '1',
        error: 'DynamoDB is unreachable',
      }),
    ]);
  });

  it('carry tenant, stream and generation from a dispatched stream record, and the outcome', async () => {
    // Prepare
    const handler = dispatcherHandler(dispatching(), captured.telemetry);

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
        round: 1,
        outcome: 'dispatched',
      }),
    ]);
  });

  it('name the sequence number of a record that is not a deletion', async () => {
    // Prepare
    const handler = dispatcherHandler(dispatching(), captured.telemetry);

    // Act
    await handler(streamEvent(streamInsert('200', aStream())));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'dispatch failed; the record will be retried',
        sequenceNumber: '200',
      }),
    ]);
  });
});

describe('createDispatcherHandler', () => {
  let output: ReturnType<typeof capturedOutput>;
  beforeEach(() => {
    output = capturedOutput();
  });
  afterEach(() => output.restore());

  const env = {
    [ENV.tableName]: TABLE,
    [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/lethe-work',
    [ENV.planQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/lethe-plans-pages',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };

  it('starts the round in the table it is configured with, reads it there, and logs a gone deletion as stale', async () => {
    // Prepare: an empty location; the deletion is gone when read after the start.
    s3.onAnyCommand().resolves({});
    table.on(TransactWriteCommand).resolves({});
    table.on(GetCommand).resolves({});
    const handler = createDispatcherHandler(env, createClients());

    // Act
    const response = await handler(streamEvent(streamInsert('1', aDeletion({ state: 'PENDING' }))));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const started = table.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems;
    expect(started?.[0]?.Update).toMatchObject({ TableName: TABLE });
    expect(table.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({ TableName: TABLE });
    expect(output.logs()).toEqual([
      expect.objectContaining({
        message: 'dispatched',
        service: 'lethe-dispatcher',
        outcome: 'stale',
      }),
    ]);
  });
});
