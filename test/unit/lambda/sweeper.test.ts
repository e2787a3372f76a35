import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OffboardingRecord } from '../../../lib/core/index.ts';
import {
  createSweeperHandler,
  type SweeperParts,
  sweeperHandler,
} from '../../../lib/lambda/sweeper.ts';
import type { Offboarder, Sweeper, SweepReport } from '../../../lib/pipeline/index.ts';
import { createClients, ENV } from '../../../lib/support/index.ts';
import { aDeletion, DELETION_ID, TABLE } from '../../helpers/records.ts';
import { capturedOutput, capturedTelemetry } from '../../helpers/telemetry.ts';

const table = mockClient(DynamoDBDocumentClient);
const report: SweepReport = { due: 1, begun: 1, stale: 3, resumed: 2, failed: 1, messages: 7 };

/** A sweeper whose oldest open deletion is `ageSeconds` old (none when undefined). */
function sweeping(ageSeconds?: number, scheduled = 0) {
  return {
    sweep: vi.fn<Sweeper['sweep']>(async () => report),
    scheduled: vi.fn<Sweeper['scheduled']>(async () => scheduled),
    oldestOpen: vi.fn<Sweeper['oldestOpen']>(async () =>
      ageSeconds === undefined
        ? undefined
        : { deletion: aDeletion({ state: 'RUNNING', generation: 2 }), ageSeconds },
    ),
  };
}

beforeEach(() => {
  table.reset();
});

describe('sweeperHandler', () => {
  let captured: ReturnType<typeof capturedTelemetry>;
  beforeEach(() => {
    captured = capturedTelemetry();
  });
  afterEach(() => captured.restore());

  it("returns the sweeper's report", async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(), captured.telemetry);

    // Act
    const result = await handler();

    // Assess
    expect(result).toEqual(report);
  });

  it('reports the age of the oldest open deletion', async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(3 * 3600), captured.telemetry);

    // Act
    await handler();

    // Assess
    expect(captured.metrics()).toEqual([{ OldestDeletionAge: 3 * 3600, ScheduledDeletions: 0 }]);
  });

  it('reports 0 when no deletion is open', async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(), captured.telemetry);

    // Act
    await handler();

    // Assess
    expect(captured.metrics()).toEqual([{ OldestDeletionAge: 0, ScheduledDeletions: 0 }]);
  });

  it('reports the age even when the sweep fails', async () => {
    // Prepare
    const sweeper = sweeping(60);
    sweeper.sweep.mockRejectedValue(new Error('DynamoDB is unreachable'));
    const handler = sweeperHandler(sweeper, captured.telemetry);

    // Act
    const swept = handler();

    // Assess: the rest of the sweep still ran, and the failure is counted
    await expect(swept).rejects.toThrow('unreachable');
    expect(captured.metrics()).toEqual([
      { OldestDeletionAge: 60, ScheduledDeletions: 0, SweepItemsFailed: 1 },
    ]);
  });

  it('reports how many deletions wait out their grace window', async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(undefined, 4), captured.telemetry);

    // Act
    await handler();

    // Assess
    expect(captured.metrics()).toEqual([expect.objectContaining({ ScheduledDeletions: 4 })]);
  });

  it('reports the offboardings still under way and those it found completed', async () => {
    // Prepare
    const records = [{ tenant: 'a' }, { tenant: 'b' }, { tenant: 'c' }] as OffboardingRecord[];
    const outcomes = ['completed', 'running', 'running'] as const;
    const refresh = vi.fn(
      async (record: OffboardingRecord) => outcomes[records.indexOf(record)] ?? 'running',
    );
    const handler = sweeperHandler(sweeping(), captured.telemetry, {
      offboarding: {
        offboardings: {
          underWay: async function* () {
            yield* records;
          },
        },
        offboarder: { refresh },
      },
    });

    // Act
    await handler();

    // Assess
    expect(refresh).toHaveBeenCalledTimes(3);
    expect(captured.metrics()).toEqual([
      expect.objectContaining({ OpenOffboardings: 2, OffboardingsCompleted: 1 }),
    ]);
    expect(captured.logs()[0]).toMatchObject({ offboardings: { completed: 1, running: 2 } });
  });

  it('counts the plans it took on and failed, and the partition deletions retention requested', async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(), captured.telemetry, {
      retention: { run: async () => ({ policies: 4, claimed: 2, requested: 2 }) },
      plans: { sweep: async () => ({ looked: 3, resumed: 2, failed: 1 }) },
    });

    // Act
    await handler();

    // Assess
    expect(captured.metrics()).toEqual([
      expect.objectContaining({
        RetentionPolicies: 4,
        RetentionDeletions: 2,
        PlansResumed: 2,
        PlansFailed: 1,
      }),
    ]);
    expect(captured.logs()[0]).toMatchObject({
      retention: { requested: 2 },
      plans: { looked: 3, resumed: 2, failed: 1 },
    });
  });

  it('logs the report with the oldest open deletion: its keys, state and age', async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(90), captured.telemetry);

    // Act
    await handler();

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'swept',
        ...report,
        scheduled: 0,
        oldest: {
          deletionId: DELETION_ID,
          tenant: 'acme',
          stream: 'logs',
          generation: 2,
          state: 'RUNNING',
          ageSeconds: 90,
        },
      }),
    ]);
  });

  it('logs no oldest deletion when none is open', async () => {
    // Prepare
    const handler = sweeperHandler(sweeping(), captured.telemetry);

    // Act
    await handler();

    // Assess
    expect(captured.logs()[0]).not.toHaveProperty('oldest');
  });
});

describe('sweeperHandler, an item that throws', () => {
  let captured: ReturnType<typeof capturedTelemetry>;
  beforeEach(() => {
    captured = capturedTelemetry();
  });
  afterEach(() => captured.restore());

  const anOffboarding = (tenant: string, state: OffboardingRecord['state'] = 'RUNNING') =>
    ({ tenant, offboardingId: `${tenant}-offboarding`, state }) as OffboardingRecord;

  /** The sweeper's other parts, each recording that it ran. */
  function parts(records: OffboardingRecord[], refresh: Offboarder['refresh']) {
    const ran: string[] = [];
    const offboarder = { refresh: vi.fn(refresh) };
    return {
      ran,
      offboarder,
      parts: {
        offboarding: {
          offboardings: {
            underWay: async function* () {
              yield* records;
            },
          },
          offboarder,
        },
        retention: {
          run: vi.fn(async () => {
            ran.push('retention');
            return { policies: 1, claimed: 1, requested: 1 };
          }),
        },
        plans: {
          sweep: vi.fn(async () => {
            ran.push('plans');
            return { looked: 1, resumed: 1, failed: 0 };
          }),
        },
      } satisfies SweeperParts,
    };
  }

  it('refreshes the other offboardings and sweeps everything else, then fails the invocation', async () => {
    // Prepare: b's offboarding throws on every refresh (a poison record)
    const records = [anOffboarding('a'), anOffboarding('b'), anOffboarding('c')];
    const sweeper = sweeping();
    const {
      parts: sweeperParts,
      offboarder,
      ran,
    } = parts(records, async (record) => {
      if (record.tenant === 'b') throw new Error('poison offboarding');
      return 'running';
    });
    const handler = sweeperHandler(sweeper, captured.telemetry, sweeperParts);

    // Act
    const swept = handler();

    // Assess: every other part ran, and the invocation still fails for the alarm
    await expect(swept).rejects.toThrow('the sweep could not handle 1 item');
    expect(offboarder.refresh).toHaveBeenCalledTimes(3);
    expect(sweeper.sweep).toHaveBeenCalledOnce();
    expect(ran).toEqual(['retention', 'plans']);
    expect(captured.metrics()).toEqual([
      expect.objectContaining({ SweepItemsFailed: 1, OpenOffboardings: 3 }),
    ]);
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: 'sweep item failed',
        step: 'refresh offboarding',
        tenant: 'b',
        offboardingId: 'b-offboarding',
        error: expect.objectContaining({ message: 'poison offboarding' }),
      }),
      expect.objectContaining({
        message: 'swept',
        offboardings: { running: 2, failed: 1 },
        itemsFailed: 1,
      }),
    ]);
  });

  it('holds the due deletions of a tenant whose offboarding could not be refreshed (it may be cancelled), and only those', async () => {
    // Prepare
    const records = [anOffboarding('a', 'CANCELLED'), anOffboarding('b')];
    const sweeper = sweeping();
    const { parts: sweeperParts } = parts(records, async (record) => {
      if (record.tenant === 'a') throw new Error('BatchGetItem throttled');
      return 'running';
    });
    const handler = sweeperHandler(sweeper, captured.telemetry, sweeperParts);

    // Act
    await handler().catch(() => undefined);

    // Assess
    const holds = sweeper.sweep.mock.calls[0]?.[0]?.holds;
    expect(holds?.(aDeletion({ tenant: 'a', state: 'SCHEDULED' }))).toBe(true);
    expect(holds?.(aDeletion({ tenant: 'b', state: 'SCHEDULED' }))).toBe(false);
    expect(holds?.(aDeletion({ tenant: 'acme', state: 'SCHEDULED' }))).toBe(false);
  });

  it('holds every due deletion when the offboardings under way cannot be read, and sweeps the rest', async () => {
    // Prepare
    const sweeper = sweeping();
    const { parts: sweeperParts, ran } = parts([], async () => 'running');
    const handler = sweeperHandler(sweeper, captured.telemetry, {
      ...sweeperParts,
      offboarding: {
        ...sweeperParts.offboarding,
        offboardings: {
          // biome-ignore lint/correctness/useYield: a listing that fails before its first item
          underWay: async function* () {
            throw new Error('DynamoDB is unreachable');
          },
        },
      },
    });

    // Act
    const swept = handler();

    // Assess
    await expect(swept).rejects.toThrow('unreachable');
    const holds = sweeper.sweep.mock.calls[0]?.[0]?.holds;
    expect(holds?.(aDeletion({ state: 'SCHEDULED' }))).toBe(true);
    expect(ran).toEqual(['retention', 'plans']);
    // Not known: not reported as none.
    expect(captured.metrics()[0]).not.toHaveProperty('OpenOffboardings');
    expect(captured.logs()[0]).toMatchObject({
      message: 'sweep item failed',
      step: 'list offboardings',
    });
  });

  it('logs and counts each item the parts could not handle, and fails once all ran', async () => {
    // Prepare: a due deletion whose begin throws, and a stream whose retention run throws
    const sweeper = sweeping();
    sweeper.sweep.mockImplementation(async (options) => {
      options?.failed?.({
        step: 'begin deletion',
        keys: { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
        error: new Error('AccessDenied'),
      });
      return { ...report, errors: 1 };
    });
    const { parts: sweeperParts, ran } = parts([], async () => 'running');
    const handler = sweeperHandler(sweeper, captured.telemetry, {
      ...sweeperParts,
      retention: {
        run: async (options) => {
          options?.failed?.({
            step: 'run retention',
            keys: { tenant: 'other', stream: 'clicks' },
            error: new Error('a bug'),
          });
          return { policies: 2, claimed: 1, requested: 1, errors: 1 };
        },
      },
    });

    // Act
    const swept = handler();

    // Assess
    await expect(swept).rejects.toThrow(
      'the sweep could not handle 2 items (logged as "sweep item failed"); the first: begin deletion acme/logs/3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c: AccessDenied',
    );
    expect(ran).toEqual(['plans']);
    expect(captured.metrics()).toEqual([expect.objectContaining({ SweepItemsFailed: 2 })]);
    const failures = captured.logs().filter((line) => line.message === 'sweep item failed');
    expect(failures).toEqual([
      expect.objectContaining({ step: 'begin deletion', deletionId: DELETION_ID, tenant: 'acme' }),
      expect.objectContaining({ step: 'run retention', tenant: 'other', stream: 'clicks' }),
    ]);
  });

  it('runs retention and plans when counting the scheduled deletions throws', async () => {
    // Prepare
    const sweeper = sweeping();
    sweeper.scheduled.mockRejectedValue(new Error('throttled'));
    const { parts: sweeperParts, ran } = parts([], async () => 'running');
    const handler = sweeperHandler(sweeper, captured.telemetry, sweeperParts);

    // Act
    const swept = handler();

    // Assess
    await expect(swept).rejects.toThrow('throttled');
    expect(ran).toEqual(['retention', 'plans']);
    expect(captured.metrics()[0]).not.toHaveProperty('ScheduledDeletions');
  });

  it('emits no SweepItemsFailed, and succeeds, when every item was handled', async () => {
    // Prepare
    const { parts: sweeperParts } = parts([anOffboarding('a')], async () => 'running');
    const handler = sweeperHandler(sweeping(), captured.telemetry, sweeperParts);

    // Act
    const result = await handler();

    // Assess
    expect(result).toEqual(report);
    expect(captured.metrics()[0]).not.toHaveProperty('SweepItemsFailed');
    expect(captured.logs()).toEqual([expect.objectContaining({ message: 'swept' })]);
    expect(captured.logs()[0]).not.toHaveProperty('itemsFailed');
  });
});

describe('createSweeperHandler', () => {
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

  it('sweeps the indexes of the table it is configured with', async () => {
    // Prepare
    table.on(QueryCommand).resolves({ Items: [] });
    const handler = createSweeperHandler(env, createClients());

    // Act
    const result = await handler();

    // Assess
    expect(result).toMatchObject({ stale: 0, resumed: 0, failed: 0, messages: 0 });
    const queries = table.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(new Set(queries.map((query) => query.TableName))).toEqual(new Set([TABLE]));
    // Open plans too, in their partition of the sweep index.
    expect(queries.map((query) => query.ExpressionAttributeValues?.[':plans'])).toContain('PLANS');
  });
});
