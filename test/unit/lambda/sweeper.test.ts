import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OffboardingRecord } from '../../../lib/core/index.ts';
import { createSweeperHandler, sweeperHandler } from '../../../lib/lambda/sweeper.ts';
import type { Sweeper, SweepReport } from '../../../lib/pipeline/index.ts';
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

    // Assess
    await expect(swept).rejects.toThrow('unreachable');
    expect(captured.metrics()).toEqual([{ OldestDeletionAge: 60 }]);
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
