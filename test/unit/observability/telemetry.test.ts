import { Readable } from 'node:stream';
import {
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clockOf,
  type DeletionRecord,
  done,
  duplicate,
  fenced,
  type Outcome,
  ok,
} from '../../../lib/core/index.ts';
import {
  count,
  countRetries,
  currentLogger,
  keysOf,
  loggedDeletionEvents,
  sample,
} from '../../../lib/observability/index.ts';
import { type DeletionEvents, Finalizer, Sweeper } from '../../../lib/pipeline/index.ts';
import { aDeletion, aStream, DELETION_ID, NOW } from '../../helpers/records.ts';
import { capturedTelemetry } from '../../helpers/telemetry.ts';

const OTHER_ID = '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';

let captured: ReturnType<typeof capturedTelemetry>;
beforeEach(() => {
  captured = capturedTelemetry();
});
afterEach(() => captured.restore());

/** Runs `act` as one invocation of a function. */
const invocation = (act: () => unknown) =>
  captured.telemetry.invocation(undefined, {}, async () => {
    await act();
  });

describe('Telemetry.invocation, metrics (EMF)', () => {
  it('publishes one document per invocation with the sum of each counter', async () => {
    // Act
    await invocation(() => {
      count('objectsDeleted', 1000);
      count('objectsDeleted', 250);
      count('pagesDeleted', 2);
    });

    // Assess
    expect(captured.metrics()).toEqual([{ ObjectsDeleted: 1250, PagesDeleted: 2 }]);
  });

  it('keeps every value of a sample', async () => {
    // Act
    await invocation(() => {
      sample('deletionDuration', 30);
      sample('deletionDuration', 90);
    });

    // Assess
    expect(captured.metrics()).toEqual([{ DeletionDuration: [30, 90] }]);
  });

  it('declares each metric with its CloudWatch unit', async () => {
    // Act
    await invocation(() => {
      count('bytesDeleted', 10);
      sample('oldestDeletionAge', 5);
    });

    // Assess
    const aws = captured.emf()[0]?._aws as { CloudWatchMetrics: { Metrics: object[] }[] };
    expect(aws.CloudWatchMetrics[0]?.Metrics).toEqual([
      { Name: 'BytesDeleted', Unit: 'Bytes' },
      { Name: 'OldestDeletionAge', Unit: 'Seconds' },
    ]);
  });

  it('publishes nothing for an invocation that counted nothing (or zero)', async () => {
    // Act
    await invocation(() => count('keysFailed', 0));

    // Assess
    expect(captured.emf()).toEqual([]);
  });

  it('publishes what an invocation counted before it threw', async () => {
    // Act
    const run = captured.telemetry.invocation(undefined, {}, async () => {
      count('keysRetried', 3);
      throw new Error('S3 is unreachable');
    });

    // Assess
    await expect(run).rejects.toThrow('unreachable');
    expect(captured.metrics()).toEqual([{ KeysRetried: 3 }]);
  });

  it('keeps invocations that run at the same time apart', async () => {
    // Prepare: the slow invocation starts first and ends last.
    const counting = (value: number, delayMs: number) =>
      invocation(async () => {
        count('objectsDeleted', value);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        count('objectsDeleted', value);
      });

    // Act
    await Promise.all([counting(7, 30), counting(500, 1)]);

    // Assess
    expect(captured.metrics().map((metrics) => metrics.ObjectsDeleted)).toEqual([1000, 14]);
  });

  it('drops what is counted outside an invocation (a script, a test)', () => {
    // Act
    count('objectsDeleted', 5);
    sample('deletionDuration', 5);

    // Assess
    expect(captured.documents).toEqual([]);
  });
});

describe('Telemetry log lines', () => {
  it("carry the invocation's keys", async () => {
    // Act
    await captured.telemetry.invocation(undefined, { tenant: 'acme', stream: 'logs' }, async () =>
      captured.telemetry.logger.info('hello'),
    );

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({ message: 'hello', tenant: 'acme', stream: 'logs' }),
    ]);
  });

  it("carry a record's keys within its scope, beside the invocation's", async () => {
    // Act
    await captured.telemetry.invocation(undefined, { tenant: 'acme' }, () =>
      captured.telemetry.scope({ deletionId: DELETION_ID, generation: 2 }, async () =>
        captured.telemetry.logger.info('in the record'),
      ),
    );

    // Assess
    expect(captured.logs()[0]).toMatchObject({
      tenant: 'acme',
      deletionId: DELETION_ID,
      generation: 2,
    });
  });

  it('keep the records of one invocation apart', async () => {
    // Act
    await captured.telemetry.invocation(undefined, {}, () =>
      Promise.all(
        [DELETION_ID, OTHER_ID].map((deletionId) =>
          captured.telemetry.scope({ deletionId }, async () => {
            await new Promise((resolve) =>
              setTimeout(resolve, deletionId === DELETION_ID ? 10 : 0),
            );
            captured.telemetry.logger.info(deletionId);
          }),
        ),
      ),
    );

    // Assess
    expect(captured.logs().map((line) => [line.message, line.deletionId])).toEqual([
      [OTHER_ID, OTHER_ID],
      [DELETION_ID, DELETION_ID],
    ]);
  });

  it('carry an error given in place of attributes as `error`', async () => {
    // Act
    await invocation(() => captured.telemetry.logger.error('broke', new Error('boom')));

    // Assess
    expect(captured.logs()[0]).toMatchObject({
      level: 'ERROR',
      error: expect.objectContaining({ message: 'boom' }),
    });
  });

  it('are reachable from code below the handlers through currentLogger, within an invocation', async () => {
    // Act
    await captured.telemetry.invocation(undefined, { tenant: 'acme' }, async () =>
      currentLogger()?.warn('from below'),
    );

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({ message: 'from below', level: 'WARN', tenant: 'acme' }),
    ]);
  });

  it('have no currentLogger outside an invocation', () => {
    expect(currentLogger()).toBeUndefined();
  });
});

describe('keysOf', () => {
  it('keeps the deletion keys that are there, and nothing else', () => {
    // Act
    const keys = keysOf({ ...aDeletion({ generation: 2 }), stream: undefined });

    // Assess
    expect(keys).toEqual({ deletionId: DELETION_ID, tenant: 'acme', generation: 2 });
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
    await invocation(() => client.send(new HeadBucketCommand({ Bucket: 'data' })));

    // Assess
    expect(captured.metrics()).toEqual([{ RequestsRetried: 2 }]);
  });

  it('counts the retries of a request that failed after all of them', async () => {
    // Prepare
    const client = s3Answering(503, 503, 503);

    // Act
    const call = invocation(() => client.send(new HeadBucketCommand({ Bucket: 'data' })));

    // Assess
    await expect(call).rejects.toThrow();
    expect(captured.metrics()).toEqual([{ RequestsRetried: 2 }]);
  });

  it('counts nothing for a request answered at once', async () => {
    // Prepare
    const client = s3Answering(200);

    // Act
    await invocation(() => client.send(new HeadBucketCommand({ Bucket: 'data' })));

    // Assess
    expect(captured.emf()).toEqual([]);
  });

  it('counts once when added to a client twice', async () => {
    // Prepare
    const client = s3Answering(503, 200);
    countRetries(client);

    // Act
    await invocation(() => client.send(new HeadBucketCommand({ Bucket: 'data' })));

    // Assess
    expect(captured.metrics()).toEqual([{ RequestsRetried: 1 }]);
  });
});

describe('loggedDeletionEvents', () => {
  const requestedAt = new Date(NOW.getTime() - 90_000).toISOString();
  const completed = aDeletion({
    state: 'COMPLETED',
    requestedAt,
    objectsDeleted: 10,
    bytesDeleted: 100,
  });
  const failed = aDeletion({ state: 'FAILED', failedObjects: 2 });
  const stalled = { code: 'Stalled', message: 'no progress' };

  it('is shaped as the pipeline port', () => {
    // Assess: assigning it is the check (a missing or mistyped event fails the type check).
    const events: DeletionEvents = loggedDeletionEvents;
    expect(Object.keys(events).sort()).toEqual(['ended', 'resumed']);
  });

  it('counts a completion and its duration', async () => {
    // Act
    await invocation(() => loggedDeletionEvents.ended(completed, 90));

    // Assess
    expect(captured.metrics()).toEqual([{ DeletionsCompleted: 1, DeletionDuration: 90 }]);
  });

  it('logs a completion with its keys, totals and duration', async () => {
    // Act
    await invocation(() => loggedDeletionEvents.ended(completed, 90));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'deletion completed',
        level: 'INFO',
        deletionId: DELETION_ID,
        tenant: 'acme',
        stream: 'logs',
        generation: 1,
        objectsDeleted: 10,
        bytesDeleted: 100,
        durationSeconds: 90,
      }),
    ]);
  });

  it('counts a failure, without a duration', async () => {
    // Act
    await invocation(() => loggedDeletionEvents.ended(failed, 90, stalled));

    // Assess
    expect(captured.metrics()).toEqual([{ DeletionsFailed: 1 }]);
  });

  it('logs a failure as a warning, with its failed objects and reason', async () => {
    // Act
    await invocation(() => loggedDeletionEvents.ended(failed, 90, stalled));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'deletion failed',
        level: 'WARN',
        deletionId: DELETION_ID,
        failedObjects: 2,
        reason: stalled,
      }),
    ]);
  });

  it('logs a failure of keys without a reason field', async () => {
    // Act
    await invocation(() => loggedDeletionEvents.ended(failed, 90));

    // Assess
    expect(captured.logs()[0]).not.toHaveProperty('reason');
  });

  it('logs a resume as a warning, with its state, attempts and last progress, and counts nothing', async () => {
    // Act
    await invocation(() =>
      loggedDeletionEvents.resumed(aDeletion({ attempts: 3 }), '2026-03-01T11:50:00.000Z'),
    );

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'resuming a stalled deletion',
        level: 'WARN',
        deletionId: DELETION_ID,
        state: 'RUNNING',
        attempts: 3,
        lastProgress: '2026-03-01T11:50:00.000Z',
      }),
    ]);
    expect(captured.emf()).toEqual([]);
  });

  it('writes nothing outside an invocation', () => {
    // Act
    loggedDeletionEvents.ended(completed, 90);
    loggedDeletionEvents.resumed(aDeletion(), requestedAt);

    // Assess
    expect(captured.documents).toEqual([]);
  });
});

describe('deletion outcomes, counted once in the invocation that made them', () => {
  const requestedAt = new Date(NOW.getTime() - 90_000).toISOString();
  const ready = aDeletion({ chainsTotal: 1, chainsSettled: 1, requestedAt });

  /** An S3 client whose bucket holds nothing under the location any more. */
  const emptyLocation = () => {
    const client = new S3Client({ region: 'us-east-1' });
    const mock = mockClient(client);
    mock.on(ListObjectVersionsCommand).resolves({ IsTruncated: false });
    mock.on(ListMultipartUploadsCommand).resolves({ IsTruncated: false });
    return client;
  };

  /** The finalizer as a function wires it: reporting to the logged events. */
  function finalizer(complete: Outcome = done) {
    return new Finalizer({
      deletions: {
        claimVerification: async () => ok(ready),
        complete: async () => complete,
        fail: async () => done,
        nextRound: async () => done,
        heartbeat: async () => duplicate(),
      },
      uploads: { record: async () => {}, aborted: async () => {}, count: async () => 0 },
      chains: {
        settle: async () => done,
        totals: async () => ({ objectsDeleted: 10, bytesDeleted: 100, failedObjects: 0 }),
        all: async () => [],
        completePage: async () => duplicate(),
        stop: async (chain) => ok(chain),
      },
      streams: { find: async () => aStream({ state: 'DELETING', deletionId: DELETION_ID }) },
      s3: emptyLocation(),
      queue: { send: async () => {} },
      events: loggedDeletionEvents,
      ingestGraceSeconds: 30,
      clock: clockOf(() => NOW),
    });
  }

  /** The sweeper as a function wires it, over one stale deletion it claims. */
  function sweeper(seen: DeletionRecord) {
    return new Sweeper({
      deletions: {
        claimStale: async (stale) =>
          ok({ ...stale, attempts: stale.attempts + 1, stalls: (stale.stalls ?? 0) + 1 }),
        begin: async () => done,
      },
      index: {
        stale: async function* () {
          yield seen;
        },
        due: async function* () {},
        scheduled: async () => 0,
      },
      chains: { list: async function* () {} },
      queue: { send: async () => {} },
      dispatcher: { dispatch: async () => ({ outcome: 'dispatched' }) },
      finalizer: finalizer(),
      events: loggedDeletionEvents,
      staleAfterSeconds: 300,
      maxAttempts: 3,
      clock: clockOf(() => NOW),
    });
  }

  it('counts a completion by the finalizer once, with its duration', async () => {
    // Act
    await invocation(() => finalizer().finalize(ready));

    // Assess
    expect(captured.metrics()).toEqual([{ DeletionsCompleted: 1, DeletionDuration: 90 }]);
  });

  it('counts nothing when the completion was fenced (another run completed it)', async () => {
    // Act
    await invocation(() => finalizer(fenced()).finalize(ready));

    // Assess
    expect(captured.emf()).toEqual([]);
    expect(captured.logs()).toEqual([]);
  });

  it('counts a deletion the sweeper gives up on once, as failed, and logs no resume', async () => {
    // Act
    await invocation(() => sweeper(aDeletion({ attempts: 3, stalls: 2 })).sweep());

    // Assess
    expect(captured.metrics()).toEqual([{ DeletionsFailed: 1 }]);
    expect(captured.logs().map((line) => line.message)).toEqual(['deletion failed']);
  });

  it('logs a resume by the sweeper once', async () => {
    // Act
    await invocation(() => sweeper(aDeletion({ attempts: 1 })).sweep());

    // Assess
    expect(captured.logs().map((line) => line.message)).toEqual(['resuming a stalled deletion']);
  });
});
