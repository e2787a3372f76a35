import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHandler } from '../../../lib/lambda/api.ts';
import { publishesMetrics } from '../../../lib/lambda/boot.ts';
import { createDispatcherHandler } from '../../../lib/lambda/dispatcher.ts';
import { createSweeperHandler } from '../../../lib/lambda/sweeper.ts';
import { createWorkerHandler } from '../../../lib/lambda/worker.ts';
import {
  type Clients,
  ConfigError,
  createClients,
  ENV,
  type LetheConfig,
  REQUIRED_SETTINGS,
} from '../../../lib/support/index.ts';
import { BUCKET, TABLE } from '../../helpers/records.ts';
import { capturedOutput } from '../../helpers/telemetry.ts';

const table = mockClient(DynamoDBDocumentClient);

/** Every resource a function can be told about, as the stack names them in its environment. */
const RESOURCES: Partial<Record<keyof LetheConfig, string>> = {
  tableName: TABLE,
  bucket: BUCKET,
  queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/lethe-work',
};

/** The environment of a function given every resource it needs, but `without` these. */
const envOf = (
  name: keyof typeof FACTORIES,
  without: ReadonlyArray<keyof LetheConfig> = [],
  extra: Record<string, string> = {},
) => ({
  POWERTOOLS_METRICS_DISABLED: 'true',
  ...Object.fromEntries(
    REQUIRED_SETTINGS[name]
      .filter((setting) => !without.includes(setting))
      .map((setting) => [ENV[setting], RESOURCES[setting] ?? `the-${setting}`]),
  ),
  ...extra,
});

const FACTORIES = {
  api: createApiHandler,
  dispatcher: createDispatcherHandler,
  worker: createWorkerHandler,
  sweeper: createSweeperHandler,
} satisfies Record<
  string,
  (env?: Record<string, string | undefined>, clients?: Clients) => unknown
>;

let output: ReturnType<typeof capturedOutput>;
beforeEach(() => {
  table.reset();
  output = capturedOutput();
});
afterEach(() => output.restore());

describe.each(['api', 'dispatcher', 'worker', 'sweeper'] as const)(
  'create the %s handler',
  (name) => {
    const create = FACTORIES[name];

    it('builds a handler when every setting it needs is there', () => {
      // Act
      const handler = create(envOf(name), createClients());

      // Assess
      expect(handler).toBeTypeOf('function');
    });

    it.each(REQUIRED_SETTINGS[name].map((setting) => [ENV[setting], setting] as const))(
      'fails fast, naming %s, when it is missing',
      (variable, setting) => {
        // Act
        const boot = () => create(envOf(name, [setting]), createClients());

        // Assess
        expect(boot).toThrow(ConfigError);
        expect(boot).toThrow(`missing setting: ${variable}`);
      },
    );

    it('names every missing setting at once', () => {
      // Act
      const boot = () => create(envOf(name, REQUIRED_SETTINGS[name]), createClients());

      // Assess
      expect(boot).toThrow(
        REQUIRED_SETTINGS[name].length > 1
          ? `missing settings: ${REQUIRED_SETTINGS[name].map((setting) => ENV[setting]).join(', ')}`
          : `missing setting: ${ENV[REQUIRED_SETTINGS[name][0]]}`,
      );
    });

    it('fails fast, naming it, on a malformed setting', () => {
      // Act
      const boot = () => create(envOf(name, [], { [ENV.pageSize]: '0' }), createClients());

      // Assess
      expect(boot).toThrow(ConfigError);
      expect(boot).toThrow(ENV.pageSize);
    });
  },
);

describe('publishesMetrics', () => {
  it.each<{ env: Record<string, string>; expected: boolean }>([
    { env: {}, expected: true },
    { env: { POWERTOOLS_METRICS_DISABLED: '' }, expected: true },
    { env: { POWERTOOLS_METRICS_DISABLED: 'false' }, expected: true },
    { env: { POWERTOOLS_METRICS_DISABLED: 'true' }, expected: false },
    { env: { POWERTOOLS_METRICS_DISABLED: 'TRUE' }, expected: false },
    { env: { POWERTOOLS_METRICS_DISABLED: '1' }, expected: false },
    { env: { POWERTOOLS_METRICS_DISABLED: 'yes' }, expected: false },
    { env: { POWERTOOLS_METRICS_DISABLED: 'on' }, expected: false },
    // Production code does not look for an emulator: the local runtime turns metrics off itself.
    { env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' }, expected: true },
  ])('is $expected with $env', ({ env, expected }) => {
    // Assess
    expect(publishesMetrics(env)).toBe(expected);
  });
});

describe('a function built with metrics on or off', () => {
  it('writes EMF unless POWERTOOLS_METRICS_DISABLED turns it off', async () => {
    // Prepare
    table.on(QueryCommand).resolves({ Items: [] });
    const on = createSweeperHandler(
      envOf('sweeper', [], { POWERTOOLS_METRICS_DISABLED: '' }),
      createClients(),
    );

    // Act
    await on();

    // Assess
    expect(output.metrics()).toEqual([expect.objectContaining({ OldestDeletionAge: 0 })]);
  });

  it("writes its metrics under its stack's name (POWERTOOLS_SERVICE_NAME), else under lethe", async () => {
    // Prepare
    table.on(QueryCommand).resolves({ Items: [] });
    const metricsOn = { POWERTOOLS_METRICS_DISABLED: '' };
    const staging = createSweeperHandler(
      envOf('sweeper', [], { ...metricsOn, POWERTOOLS_SERVICE_NAME: 'LetheStaging' }),
      createClients(),
    );
    const local = createSweeperHandler(envOf('sweeper', [], metricsOn), createClients());

    // Act
    await staging();
    await local();

    // Assess
    expect(output.emf().map((document) => document.service)).toEqual(['LetheStaging', 'lethe']);
  });

  it('writes no EMF when POWERTOOLS_METRICS_DISABLED is true', async () => {
    // Prepare
    table.on(QueryCommand).resolves({ Items: [] });
    const off = createSweeperHandler(envOf('sweeper'), createClients());

    // Act
    await off();

    // Assess
    expect(output.emf()).toEqual([]);
  });
});
