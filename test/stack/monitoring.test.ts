import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LetheStack } from '../../cdk/lethe-stack.ts';
import {
  getAtt,
  logicalId,
  offlineApp,
  ref,
  render,
  resourcesOfType,
  type Synthesized,
  synthesize,
} from './template.ts';

// Prepare: metric names are spelled out here, not imported, so that a rename on the emitting
// side (lib/metrics.ts, asserted as EMF in test/unit/observability.test.ts) fails a test.
const EMAIL = 'oncall@example.com';
const defaults = synthesize();
const custom = synthesize({
  alarmEmail: EMAIL,
  maxDeletionAge: Duration.minutes(90),
  sweepIntervalMinutes: 15,
});
const lethe = (metricName: string) => ({
  Namespace: 'Lethe',
  MetricName: metricName,
  Dimensions: [{ Name: 'service', Value: 'Lethe' }],
});
const queueDepth = (queueId: string) => ({
  Namespace: 'AWS/SQS',
  MetricName: 'ApproximateNumberOfMessagesVisible',
  Dimensions: [{ Name: 'QueueName', Value: getAtt(queueId, 'QueueName') }],
});

interface Widget {
  type: string;
  properties: {
    title?: string;
    metrics?: unknown[][];
    annotations?: { horizontal?: { value: number }[] };
    alarms?: string[];
  };
}

/** The dashboard's widgets, its body rendered with `<LogicalId.Attribute>` for references. */
function widgets({ template }: Synthesized): Widget[] {
  const [dashboard, ...others] = resourcesOfType(template, 'AWS::CloudWatch::Dashboard');
  expect(dashboard, 'one dashboard').toBeDefined();
  expect(others).toEqual([]);
  return (JSON.parse(render(dashboard?.[1].Properties?.DashboardBody)) as { widgets: Widget[] })
    .widgets;
}

/** The [namespace, name, dimension, value, {stat, period}] rows of the widget with this title. */
function graphed(synthesized: Synthesized, title: string) {
  const widget = widgets(synthesized).find((candidate) => candidate.properties.title === title);
  if (!widget) throw new Error(`no widget titled ${title}`);
  return (widget.properties.metrics ?? []).map((row) => {
    const options = row.at(-1) as { stat?: string; period?: number };
    // A dashboard metric without a period is graphed at CloudWatch's default, 300 s.
    return [...row.slice(0, -1), options.stat, options.period ?? 300];
  });
}

describe('dashboard', () => {
  const work = `<${defaults.workQueueId}.QueueName>`;

  it.each([
    {
      widget: 'Throughput: objects deleted per minute',
      row: ['Lethe', 'ObjectsDeleted', 'service', 'Lethe', 'Sum', 60],
    },
    {
      widget: 'Backlog: pages waiting in the work queue',
      row: ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', work, 'Maximum', 60],
    },
    {
      widget: 'Dead letters',
      row: [
        'AWS/SQS',
        'ApproximateNumberOfMessagesVisible',
        'QueueName',
        `<${defaults.deadLetterQueueId}.QueueName>`,
        'Maximum',
        60,
      ],
    },
    {
      widget: 'Dead letters',
      row: [
        'AWS/SQS',
        'ApproximateNumberOfMessagesVisible',
        'QueueName',
        `<${defaults.dispatchFailuresId}.QueueName>`,
        'Maximum',
        60,
      ],
    },
    {
      widget: 'Age of the oldest open deletion (s)',
      row: ['Lethe', 'OldestDeletionAge', 'service', 'Lethe', 'Maximum', 300],
    },
    {
      widget: 'Failures',
      row: ['Lethe', 'DeletionsFailed', 'service', 'Lethe', 'Sum', 300],
    },
    { widget: 'Failures', row: ['Lethe', 'KeysFailed', 'service', 'Lethe', 'Sum', 300] },
    {
      widget: 'Failures',
      row: ['Lethe', 'SweepItemsFailed', 'service', 'Lethe', 'Sum', 300],
    },
    {
      widget: 'Failures',
      row: ['AWS/ApiGateway', '5XXError', 'ApiName', 'Lethe', 'Sum', 300],
    },
    {
      widget: 'Throttling retried',
      row: ['Lethe', 'KeysRetried', 'service', 'Lethe', 'Sum', 60],
    },
    {
      widget: 'Throttling retried',
      row: ['Lethe', 'RequestsRetried', 'service', 'Lethe', 'Sum', 60],
    },
    {
      widget: 'Throttling retried',
      row: ['Lethe', 'PagesDeferred', 'service', 'Lethe', 'Sum', 60],
    },
    {
      widget: 'Throttling retried',
      row: ['Lethe', 'PagesSlowedDown', 'service', 'Lethe', 'Sum', 60],
    },
    {
      widget: 'Tenant offboardings',
      row: ['Lethe', 'OpenOffboardings', 'service', 'Lethe', 'Maximum', 300],
    },
    {
      widget: 'Tenant offboardings',
      row: ['Lethe', 'OffboardingsCompleted', 'service', 'Lethe', 'Sum', 300],
    },
  ])('graphs $row.1 in "$widget"', ({ widget, row }) => {
    // Act
    const rows = graphed(defaults, widget);

    // Assess
    expect(rows).toContainEqual(row);
  });

  it('graphs the errors of every function under "Failures"', () => {
    // Act
    const errors = graphed(defaults, 'Failures').filter((row) => row[1] === 'Errors');

    // Assess
    expect(errors.map((row) => row[3]).sort()).toEqual(
      [
        ...(['api', 'dispatcher', 'sweeper', 'worker', 'planner'] as const).map(
          (fn) => `<${defaults.fn(fn)}>`,
        ),
        `<${logicalId(defaults.stack, defaults.stack.functions.publisher.function)}>`,
      ].sort(),
    );
  });

  it('marks the long-running threshold on the age graph', () => {
    // Act
    const age = widgets(custom).find(
      (widget) => widget.properties.title === 'Age of the oldest open deletion (s)',
    );

    // Assess
    expect(age?.properties.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: 90 * 60 }),
    ]);
  });

  it('shows the state of every alarm', () => {
    // Act
    const status = widgets(defaults).find((widget) => widget.type === 'alarm');
    const alarmArns = resourcesOfType(defaults.template, 'AWS::CloudWatch::Alarm').map(
      ([id]) => `<${id}.Arn>`,
    );

    // Assess
    expect(status?.properties.alarms?.sort()).toEqual(alarmArns.sort());
  });
});

describe('alarms', () => {
  it('are exactly the eight the on-call rota is paged by', () => {
    // Assess
    defaults.template.resourceCountIs('AWS::CloudWatch::Alarm', 8);
  });

  it('fire when the sweeper fails, or does not run, three sweeps in a row', () => {
    // Act
    const [[, alarm] = []] = resourcesOfType(defaults.template, 'AWS::CloudWatch::Alarm').filter(
      ([id]) => id.includes('SweeperAlarm'),
    );
    const metrics = (alarm?.Properties?.Metrics ?? []) as Array<{
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] }; Stat: string };
    }>;

    // Assess
    expect(alarm?.Properties).toMatchObject({
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      EvaluationPeriods: 3,
      TreatMissingData: 'breaching',
    });
    expect(metrics.find((metric) => metric.Expression)?.Expression).toBe('IF(runs < 1, 1, errors)');
    // A sweep with an item it could not handle fails its invocation: this alarm is the one.
    expect(alarm?.Properties?.AlarmDescription).toEqual(
      expect.stringContaining('A sweep fails when an item of it failed (SweepItemsFailed)'),
    );
    expect(alarm?.Properties?.AlarmDescription).toEqual(
      expect.stringContaining('"sweep item failed"'),
    );
    const sweeper = { Ref: logicalId(defaults.stack, defaults.stack.functions.sweeper.function) };
    for (const [id, name] of [
      ['runs', 'Invocations'],
      ['errors', 'Errors'],
    ]) {
      expect(metrics.find((metric) => metric.Id === id)?.MetricStat).toMatchObject({
        Metric: { MetricName: name, Dimensions: [{ Name: 'FunctionName', Value: sweeper }] },
        Stat: 'Sum',
      });
    }
  });

  it.each([
    {
      alarm: 'the dead-letter queue is not empty',
      expected: {
        ...queueDepth(defaults.deadLetterQueueId),
        Statistic: 'Maximum',
        Period: 60,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
      },
    },
    {
      alarm: 'dispatcher records were sent to the on-failure queue',
      expected: {
        ...queueDepth(defaults.dispatchFailuresId),
        Statistic: 'Maximum',
        Period: 60,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
      },
    },
    {
      alarm: 'a deletion ended FAILED',
      expected: {
        ...lethe('DeletionsFailed'),
        Statistic: 'Sum',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
      },
    },
    {
      alarm: 'a deletion has been open for more than 6 hours (the default)',
      expected: {
        ...lethe('OldestDeletionAge'),
        Statistic: 'Maximum',
        Period: 300,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 6 * 3600,
        // Reported once per sweep: between sweeps the alarm keeps its state.
        TreatMissingData: 'ignore',
      },
    },
    {
      alarm: 'the API answered 5xx',
      expected: {
        Namespace: 'AWS/ApiGateway',
        MetricName: '5XXError',
        Dimensions: [{ Name: 'ApiName', Value: 'Lethe' }],
        Statistic: 'Sum',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
      },
    },
    {
      alarm: 'state changes could not be published',
      expected: {
        ...queueDepth(logicalId(defaults.stack, defaults.stack.events.failures)),
        Statistic: 'Maximum',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
      },
    },
    {
      alarm: 'plan pages failed every delivery',
      expected: {
        ...queueDepth(logicalId(defaults.stack, defaults.stack.plans.deadLetterQueue)),
        Statistic: 'Maximum',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
      },
    },
  ])('fire when $alarm', ({ expected }) => {
    // Assess
    defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      EvaluationPeriods: 1,
      ...expected,
    });
  });

  it('watch the age over one sweep interval, against maxDeletionAge', () => {
    // Assess: sweepIntervalMinutes 15, maxDeletionAge 90 minutes.
    custom.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ...lethe('OldestDeletionAge'),
      Period: 900,
      Threshold: 5400,
    });
  });

  it('watch the API by the name the stack gives it', () => {
    // Assess
    defaults.template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'Lethe' });
  });

  it('notify no one without alarmEmail', () => {
    // Assess
    defaults.template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const [, alarm] of resourcesOfType(defaults.template, 'AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties?.AlarmActions).toBeUndefined();
    }
  });
});

describe('alarm topic (alarmEmail)', () => {
  const { template, stack } = custom;
  const topic = stack.monitoring.topic;
  const topicId = () => {
    if (!topic) throw new Error('no topic');
    return logicalId(stack, topic);
  };

  it('receives every alarm, and its return to OK', () => {
    // Act
    const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm');

    // Assess
    expect(alarms).toHaveLength(8);
    for (const [, alarm] of alarms) {
      expect(alarm.Properties?.AlarmActions).toEqual([ref(topicId())]);
      expect(alarm.Properties?.OKActions).toEqual([ref(topicId())]);
    }
  });

  it('sends them to the address from alarmEmail', () => {
    // Assess
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: EMAIL,
      TopicArn: ref(topicId()),
    });
  });

  it('is encrypted with a rotated key that CloudWatch may use', () => {
    // Act
    // The topic's key (the other key signs certificates).
    const [key] = resourcesOfType(template, 'AWS::KMS::Key').filter(
      ([, resource]) => resource.Properties?.KeyUsage !== 'SIGN_VERIFY',
    );

    // Assess
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: getAtt(key?.[0] ?? '', 'Arn'),
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
  });

  it("lets CloudWatch use the topic's key for this account's alarms only (no confused deputy)", () => {
    // Act
    const [key] = resourcesOfType(template, 'AWS::KMS::Key').filter(
      ([, resource]) => resource.Properties?.KeyUsage !== 'SIGN_VERIFY',
    );
    const policy = (key?.[1].Properties?.KeyPolicy ?? { Statement: [] }) as {
      Statement: { Principal?: unknown; Condition?: unknown }[];
    };
    const statements = policy.Statement.filter(
      (statement) =>
        JSON.stringify(statement.Principal) ===
        JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }),
    );

    // Assess
    expect(statements).toHaveLength(1);
    const condition = statements[0]?.Condition as {
      StringEquals?: Record<string, unknown>;
      ArnLike?: Record<string, unknown>;
    };
    expect(Object.keys(condition ?? {}).sort()).toEqual(['ArnLike', 'StringEquals']);
    expect(condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    expect(render(condition.ArnLike?.['aws:SourceArn'])).toBe(
      'arn:<AWS::Partition>:cloudwatch:<AWS::Region>:<AWS::AccountId>:alarm:*',
    );
  });

  it('refuses publishing without TLS', () => {
    // Assess
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [ref(topicId())],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it("lets this account's alarms publish, which the topic policy's Deny would otherwise leave unsaid", () => {
    // Act: a topic policy replaces the default one, so the Allow must be in it
    const [[, policy] = []] = resourcesOfType(template, 'AWS::SNS::TopicPolicy');
    const statements = (
      (policy?.Properties?.PolicyDocument ?? { Statement: [] }) as {
        Statement: { Effect: string; Principal?: unknown; Action?: unknown; Condition?: unknown }[];
      }
    ).Statement.filter((statement) => statement.Effect === 'Allow');

    // Assess
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
    });
    const condition = statements[0]?.Condition as Record<string, Record<string, unknown>>;
    expect(condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    expect(render(condition.ArnLike?.['aws:SourceArn'])).toBe(
      'arn:<AWS::Partition>:cloudwatch:<AWS::Region>:<AWS::AccountId>:alarm:*',
    );
  });

  it('is an output', () => {
    // Assess
    template.hasOutput('AlarmTopicArn', { Value: ref(topicId()) });
  });
});

describe('metrics of one stack', () => {
  it("emit under the stack's name, which its alarms and dashboard read: two stacks never share a series", () => {
    // Arrange: a second stack in the same account and region
    const app = offlineApp();
    const staging = new LetheStack(app, 'LetheStaging');
    const template = Template.fromStack(staging);

    // Assess
    for (const [, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> })
        ?.Variables;
      if (variables?.POWERTOOLS_LOG_LEVEL) {
        expect(variables.POWERTOOLS_SERVICE_NAME).toBe('LetheStaging');
      }
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'DeletionsFailed',
      Dimensions: [{ Name: 'service', Value: 'LetheStaging' }],
    });
  });
});
