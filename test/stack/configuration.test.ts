import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { propsFromContext } from '../../cdk/context.ts';
import { ENV, MAX_EVENTS_BYTES } from '../../lib/support/index.ts';
import { allowStatements, allows } from './iam.ts';
import {
  ENTRIES,
  FUNCTION_NAMES,
  FUNCTIONS_BUT_PUBLISHER,
  offlineApp,
  resourceById,
  resourcesOfType,
  synthesize,
} from './template.ts';

/** The ARN of a customer-managed key, as `-c bucketKeyArn=` takes it. */
const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/** The context `cdk -c key=value` gives the app: every value a string. */
const contextOf = (context: Record<string, string>) => {
  const app = offlineApp();
  for (const [key, value] of Object.entries(context)) app.node.setContext(key, value);
  return propsFromContext(app.node);
};

describe('receiptRetentionDays', () => {
  it.each([
    { stack: 'defaults', props: {}, days: '365' },
    { stack: 'receiptRetentionDays: 30', props: { receiptRetentionDays: 30 }, days: '30' },
    {
      stack: '-c receiptRetentionDays=7',
      props: contextOf({ receiptRetentionDays: '7' }),
      days: '7',
    },
  ])('gives every function LETHE_RECEIPT_RETENTION_DAYS=$days with $stack', ({ props, days }) => {
    // Act
    const { template } = synthesize(props);

    // Assess: every function that reads the table (the publisher reads only stream images)
    for (const fn of FUNCTIONS_BUT_PUBLISHER) {
      template.hasResource('AWS::Lambda::Function', {
        Metadata: { 'lethe:entry': ENTRIES[fn] },
        Properties: { Environment: { Variables: { [ENV.receiptRetentionDays]: days } } },
      });
    }
  });
});

describe('context (-c key=value)', () => {
  it('reads every key into the stack props', () => {
    // Act
    const props = contextOf({
      bucketName: 'existing-data',
      bucketKeyArn: KEY_ARN,
      dataRoot: 'lake',
      sweepIntervalMinutes: '2',
      staleAfterSeconds: '120',
      maxAttempts: '3',
      workerConcurrency: '50',
      maxKeysPerSecond: '2000',
      receiptRetentionDays: '30',
      maxDeletionAgeMinutes: '90',
      alarmEmail: 'oncall@example.com',
      apiLogging: 'false',
      apiCloudWatchRole: 'false',
      certificateKeyVersion: '2',
      pageSize: '500',
      maxRounds: '7',
      ingestGraceSeconds: '60',
      maxEventsBytes: '2097152',
      retryAfterSeconds: '10',
      offboardingPageSize: '50',
    });

    // Assess
    expect({ ...props, maxDeletionAge: props.maxDeletionAge?.toMinutes() }).toEqual({
      bucketName: 'existing-data',
      bucketKeyArn: KEY_ARN,
      dataRoot: 'lake',
      sweepIntervalMinutes: 2,
      staleAfterSeconds: 120,
      maxAttempts: 3,
      workerConcurrency: 50,
      maxKeysPerSecond: 2000,
      receiptRetentionDays: 30,
      maxDeletionAge: Duration.minutes(90).toMinutes(),
      alarmEmail: 'oncall@example.com',
      apiLogging: false,
      apiCloudWatchRole: false,
      certificateKeyVersion: 2,
      pageSize: 500,
      maxRounds: 7,
      ingestGraceSeconds: 60,
      maxEventsBytes: 2_097_152,
      retryAfterSeconds: 10,
      offboardingPageSize: 50,
    });
  });

  it('leaves absent keys to the stack defaults', () => {
    // Assess
    expect(contextOf({})).toEqual({});
  });

  it.each([
    { key: 'receiptRetentionDays', value: 'a year' },
    { key: 'workerConcurrency', value: '-1' },
    { key: 'apiLogging', value: 'no' },
    { key: 'apiCloudWatchRole', value: 'yes' },
  ])('refuses $key=$value', ({ key, value }) => {
    // Assess
    expect(() => contextOf({ [key]: value })).toThrow(key);
  });
});

describe('settings every function reads alike', () => {
  const settings = {
    pageSize: 500,
    maxRounds: 7,
    ingestGraceSeconds: 60,
    maxEventsBytes: 2_097_152,
    retryAfterSeconds: 10,
    offboardingPageSize: 50,
    staleAfterSeconds: 120,
    maxAttempts: 3,
  } as const;
  const configured = synthesize(settings);
  const defaults = synthesize();

  it.each(FUNCTIONS_BUT_PUBLISHER)(
    'reach the %s function as they were given, and are left out by default',
    (name) => {
      // Assess
      const variablesOf = (synthesized: ReturnType<typeof synthesize>) =>
        (
          resourceById(synthesized.template, synthesized.fn(name)).Properties?.Environment as
            | { Variables?: Record<string, unknown> }
            | undefined
        )?.Variables ?? {};
      const given = variablesOf(configured);
      for (const [setting, value] of Object.entries(settings)) {
        expect(given[ENV[setting as keyof typeof settings]]).toBe(String(value));
        expect(variablesOf(defaults)).not.toHaveProperty(ENV[setting as keyof typeof settings]);
      }
    },
  );
});

describe('settings the functions would refuse at their cold start', () => {
  it.each([
    {
      props: { ingestGraceSeconds: 1 },
      message: 'LETHE_INGEST_GRACE_SECONDS must be an integer from 2 to 900 (got 1)',
    },
    {
      props: { maxAttempts: 500 },
      message: 'LETHE_MAX_ATTEMPTS must be an integer from 1 to 100 (got 500)',
    },
    {
      props: { maxKeysPerSecond: 2_000_000 },
      message: 'LETHE_MAX_KEYS_PER_SECOND must be an integer from 0 to 1000000',
    },
    { props: { dataRoot: 'Bad Root' }, message: 'LETHE_DATA_ROOT must be path segments' },
    { props: { pageSize: 5_000 }, message: 'LETHE_PAGE_SIZE must be an integer from 1 to 1000' },
    {
      props: { workerConcurrency: 1 },
      message: 'LETHE_WORKER_CONCURRENCY must be an integer from 2 to 1000 (got 1)',
    },
    {
      props: { workerConcurrency: 5_000 },
      message: 'LETHE_WORKER_CONCURRENCY must be an integer from 2 to 1000 (got 5000)',
    },
    {
      // Lambda's 6 MiB payload, which the body no longer fits once base64-encoded.
      props: { maxEventsBytes: 6_291_456 },
      message: 'LETHE_MAX_EVENTS_BYTES must be an integer from 1 to 4500000 (got 6291456)',
    },
    {
      props: { maxEventsBytes: 4_500_001 },
      message: 'LETHE_MAX_EVENTS_BYTES must be an integer from 1 to 4500000 (got 4500001)',
    },
  ])('fail the synth, as the function would fail: $props', ({ props, message }) => {
    // Assess
    expect(() => synthesize(props)).toThrow(message);
  });
});

describe('maxKeysPerSecond', () => {
  it.each([
    { stack: 'maxKeysPerSecond: 1500', props: { maxKeysPerSecond: 1500 } },
    { stack: '-c maxKeysPerSecond=1500', props: contextOf({ maxKeysPerSecond: '1500' }) },
  ])(
    'gives the worker, the dispatcher and the api LETHE_MAX_KEYS_PER_SECOND=1500 with $stack',
    ({ props }) => {
      // Act
      const { template } = synthesize(props);

      // Assess: the first two delete pages; the api's plans estimate under the budget.
      for (const entry of [ENTRIES.worker, ENTRIES.dispatcher, ENTRIES.api]) {
        template.hasResource('AWS::Lambda::Function', {
          Metadata: { 'lethe:entry': entry },
          Properties: { Environment: { Variables: { [ENV.maxKeysPerSecond]: '1500' } } },
        });
      }
    },
  );

  it('sets no budget by default', () => {
    // Act
    const { template } = synthesize({});

    // Assess
    for (const [, fn] of Object.entries(template.findResources('AWS::Lambda::Function'))) {
      const variables = (fn.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>;
      expect(variables).not.toHaveProperty(ENV.maxKeysPerSecond);
    }
  });
});

describe('maxEventsBytes', () => {
  it('fits, base64-encoded, in the payload Lambda takes from API Gateway, with room for the event', () => {
    // Act: binary media types */* hand the function every body base64-encoded
    const encoded = Math.ceil(MAX_EVENTS_BYTES / 3) * 4;

    // Assess: Lambda's synchronous payload is 6,291,456 bytes; headers and context need room
    expect(encoded + 256 * 1024).toBeLessThanOrEqual(6_291_456);
  });

  it('reaches the functions at the largest size that fits', () => {
    // Act
    const { template } = synthesize({ maxEventsBytes: MAX_EVENTS_BYTES });

    // Assess
    template.hasResource('AWS::Lambda::Function', {
      Metadata: { 'lethe:entry': ENTRIES.api },
      Properties: { Environment: { Variables: { [ENV.maxEventsBytes]: '4500000' } } },
    });
  });
});

describe('staleAfterSeconds', () => {
  it.each([0, 60, 119, 86_401])(
    'refuses %s: a Stalled verdict would close pages a worker (60 s) may still be deleting',
    (seconds) => {
      // Assess
      expect(() => synthesize({ staleAfterSeconds: seconds })).toThrow(
        `staleAfterSeconds must be an integer from 120 to 86400 (got ${seconds})`,
      );
    },
  );

  it('takes twice the worker timeout', () => {
    // Assess
    expect(() => synthesize({ staleAfterSeconds: 120 })).not.toThrow();
  });
});

describe('sweepIntervalMinutes', () => {
  it.each([
    { minutes: 1, expression: 'rate(1 minute)' },
    { minutes: 1_440, expression: 'rate(1 day)' },
  ])('runs the sweeper on $expression at $minutes', ({ minutes, expression }) => {
    // Act
    const { template } = synthesize({ sweepIntervalMinutes: minutes });

    // Assess
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: expression });
  });

  it("keeps the sweeper alarm's three periods inside CloudWatch's 7 days at 1,440", () => {
    // Act
    const { template } = synthesize({ sweepIntervalMinutes: 1_440 });

    // Assess: Period × EvaluationPeriods ≤ 604,800 s, for the alarm and each of its metrics
    for (const [, alarm] of resourcesOfType(template, 'AWS::CloudWatch::Alarm')) {
      const evaluations = Number(alarm.Properties?.EvaluationPeriods);
      const periods = [
        alarm.Properties?.Period,
        ...(
          (alarm.Properties?.Metrics as { MetricStat?: { Period?: unknown } }[] | undefined) ?? []
        ).map((metric) => metric.MetricStat?.Period),
      ].filter((period) => period !== undefined);
      for (const period of periods)
        expect(Number(period) * evaluations).toBeLessThanOrEqual(604_800);
    }
  });

  it.each([0, 1.5, 1_441, 5_000])(
    'refuses %s, which EventBridge or CloudWatch would refuse at deploy time',
    (minutes) => {
      // Assess
      expect(() => synthesize({ sweepIntervalMinutes: minutes })).toThrow(
        `sweepIntervalMinutes must be an integer from 1 to 1440 (got ${minutes})`,
      );
    },
  );

  it('refuses -c sweepIntervalMinutes=5000 in the synth', () => {
    // Assess
    expect(() => synthesize(contextOf({ sweepIntervalMinutes: '5000' }))).toThrow(
      'sweepIntervalMinutes must be an integer from 1 to 1440',
    );
  });
});

describe('certificateKeyVersion', () => {
  it('refuses -c certificateKeyVersion=0 by name, rather than taking it for 1', () => {
    // Assess
    expect(() => synthesize(contextOf({ certificateKeyVersion: '0' }))).toThrow(
      'certificateKeyVersion must be a whole number from 1 (got 0)',
    );
  });
});

describe('maxDeletionAge (the long-running deletion alarm)', () => {
  it.each([
    { given: 'maxDeletionAge: 30 seconds', props: { maxDeletionAge: Duration.seconds(30) } },
    { given: '-c maxDeletionAgeMinutes=0', props: contextOf({ maxDeletionAgeMinutes: '0' }) },
  ])('refuses less than a minute, which would page for every deletion: $given', ({ props }) => {
    // Assess
    expect(() => synthesize(props)).toThrow(
      'maxDeletionAge (context maxDeletionAgeMinutes) must be at least 1 minute',
    );
  });

  it('takes -c maxDeletionAgeMinutes=1 as the alarm threshold, in seconds', () => {
    // Act
    const { template } = synthesize(contextOf({ maxDeletionAgeMinutes: '1' }));

    // Assess
    const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm').filter(([id]) =>
      id.includes('LongRunningDeletionAlarm'),
    );
    expect(alarms.map(([, alarm]) => alarm.Properties?.Threshold)).toEqual([60]);
  });
});

describe('bucketKeyArn (an existing bucket encrypted with a customer-managed KMS key)', () => {
  const kmsActions = (
    synthesized: ReturnType<typeof synthesize>,
    fn: (typeof FUNCTION_NAMES)[number],
  ) =>
    allowStatements(synthesized.template, fn).filter((statement) =>
      [statement.Action ?? []].flat().some((action) => action.startsWith('kms:')),
    );

  it.each([
    { stack: 'bucketKeyArn', props: { bucketName: 'existing-data', bucketKeyArn: KEY_ARN } },
    {
      stack: '-c bucketKeyArn',
      props: contextOf({ bucketName: 'existing-data', bucketKeyArn: KEY_ARN }),
    },
  ])('lets the api ask that key for data keys, as PutObject needs, with $stack', ({ props }) => {
    // Act
    const synthesized = synthesize(props);

    // Assess: GenerateDataKey only, on that key only (S3 asks it as the writer)
    const onKey = kmsActions(synthesized, 'api').filter(
      (statement) => statement.Resource === KEY_ARN,
    );
    expect(onKey).toEqual([expect.objectContaining({ Action: 'kms:GenerateDataKey' })]);
    for (const fn of FUNCTION_NAMES.filter((name) => name !== 'api')) {
      expect(JSON.stringify(kmsActions(synthesized, fn)), fn).not.toContain(KEY_ARN);
    }
  });

  it('grants no KMS key on the bucket without it', () => {
    // Act
    const actions = allowStatements(
      synthesize({ bucketName: 'existing-data' }).template,
      'api',
    ).flatMap((statement) => [statement.Action ?? []].flat());

    // Assess: the certificate key's Sign and GetPublicKey only
    expect(allows(actions, 'kms:GenerateDataKey')).toBe(false);
  });

  it.each([
    { stack: 'bucketKeyArn', props: { bucketKeyArn: KEY_ARN } },
    { stack: '-c bucketKeyArn', props: contextOf({ bucketKeyArn: KEY_ARN }) },
  ])(
    "fails the synth without bucketName (the stack's own bucket is SSE-S3) with $stack",
    ({ props }) => {
      // Assess
      expect(() => synthesize(props)).toThrow(
        'bucketKeyArn is the KMS key of an existing bucket: give bucketName too',
      );
    },
  );

  it.each([
    'arn:aws:kms:eu-west-1:123456789012:alias/data',
    '1234abcd-12ab-34cd-56ef-1234567890ab',
    'arn:aws:s3:::existing-data',
    `${KEY_ARN}*`,
  ])('fails the synth on %s, which is no key ARN', (arn) => {
    // Assess
    expect(() => synthesize({ bucketName: 'existing-data', bucketKeyArn: arn })).toThrow(
      'bucketKeyArn must be a KMS key ARN',
    );
  });

  it.each([
    'arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    'arn:aws-cn:kms:cn-north-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab',
  ])('takes %s', (arn) => {
    // Assess
    expect(() => synthesize({ bucketName: 'existing-data', bucketKeyArn: arn })).not.toThrow();
  });
});
