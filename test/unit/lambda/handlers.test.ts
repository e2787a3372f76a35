import type { SQSBatchResponse } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import type { DeletionRef, Dispatcher } from '../../lib/dispatch.ts';
import { dispatcherHandler, sweeperHandler, workerHandler } from '../../lib/handlers.ts';
import type { WorkMessage } from '../../lib/messages.ts';
import type { PageWorker, WorkOutcome } from '../../lib/page-worker.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import type { Sweeper, SweepReport } from '../../lib/sweeper.ts';
import { sqsEvent, sqsRecord, streamEvent, streamInsert } from '../helpers/events.ts';
import { fake } from '../helpers/fakes.ts';
import { aDeletion, aStream, CHAIN_ID, DELETION_ID } from '../helpers/records.ts';
import { quietTelemetry } from '../helpers/telemetry.ts';

const fence = { v: 1, tenant: 'acme', deletionId: DELETION_ID, generation: 1, round: 1 } as const;
/** Records are processed concurrently: the order of the failures carries no meaning. */
const failedIds = (response: SQSBatchResponse) =>
  response.batchItemFailures.map((failure) => failure.itemIdentifier).sort();

const page = (n: number) => JSON.stringify({ ...fence, type: 'page', chainId: CHAIN_ID, page: n });

describe('workerHandler', () => {
  const worker = () => {
    const handle = vi.fn(async (message: WorkMessage): Promise<WorkOutcome> => {
      if (message.type === 'page' && message.page === 2) throw new Error('S3 is unreachable');
      return { outcome: 'duplicate' };
    });
    return { handle, handler: workerHandler(fake<PageWorker>({ handle }), quietTelemetry()) };
  };

  it('reports exactly the messages that failed or could not be parsed', async () => {
    const { handler } = worker();
    const event = sqsEvent(
      sqsRecord('m1', page(1)),
      sqsRecord('m2', page(2)),
      sqsRecord('m3', '{not json'),
      sqsRecord('m4', page(4)),
    );

    const response = await handler(event);

    expect(failedIds(response)).toEqual(['m2', 'm3']);
  });

  it('hands every parseable message to the worker, and no unparseable one', async () => {
    const { handle, handler } = worker();
    const event = sqsEvent(sqsRecord('m1', page(1)), sqsRecord('m3', '{"v":2}'));

    await handler(event);

    expect(handle.mock.calls).toEqual([[JSON.parse(page(1))]]);
  });

  it('reports no failures when every message succeeds', async () => {
    const { handler } = worker();
    const event = sqsEvent(sqsRecord('m1', page(1)), sqsRecord('m4', page(4)));

    const response = await handler(event);

    expect(response).toEqual({ batchItemFailures: [] });
  });
});

describe('dispatcherHandler', () => {
  const dispatcher = () => {
    const dispatch = vi.fn(async (_ref: DeletionRef) => 'dispatched' as const);
    return {
      dispatch,
      handler: dispatcherHandler(fake<Dispatcher>({ dispatch }), quietTelemetry()),
    };
  };
  const event = () =>
    streamEvent(
      streamInsert('100', aDeletion({ state: 'PENDING', round: 2 })),
      streamInsert('200', aStream()),
      streamInsert('300'),
    );

  it('reports the sequence numbers of malformed records as failed', async () => {
    const { handler } = dispatcher();

    const response = await handler(event());

    expect(failedIds(response)).toEqual(['200', '300']);
  });

  it('dispatches the pending deletion of the good record', async () => {
    const { dispatch, handler } = dispatcher();

    await handler(event());

    expect(dispatch.mock.calls).toEqual([[{ tenant: 'acme', deletionId: DELETION_ID, round: 2 }]]);
  });
});

describe('sweeperHandler', () => {
  it("returns the sweeper's report", async () => {
    const report: SweepReport = { stale: 3, resumed: 2, failed: 1, messages: 7 };
    const handler = sweeperHandler(
      fake<Sweeper>({ sweep: async () => report }),
      fake<ProgressStore>({ stale: async function* () {} }),
      quietTelemetry(),
    );

    const result = await handler();

    expect(result).toEqual(report);
  });
});
