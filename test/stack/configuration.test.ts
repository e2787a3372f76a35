import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { propsFromContext } from '../../cdk/context.ts';
import { ENV } from '../../lib/support/index.ts';
import { ENTRIES, FUNCTION_NAMES, offlineApp, resourceById, synthesize } from './template.ts';

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

    // Assess
    for (const fn of FUNCTION_NAMES) {
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

  it.each(FUNCTION_NAMES)(
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
      props: { staleAfterSeconds: 0 },
      message: 'LETHE_STALE_AFTER_SECONDS must be an integer from 1 to 86400 (got 0)',
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
