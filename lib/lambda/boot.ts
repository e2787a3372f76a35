// lib/lambda: the Lambda functions. Event adapters, and the boot that builds each function once per cold start.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  countRetries,
  METRICS_DIMENSIONS,
  METRICS_NAMESPACE,
  Telemetry,
} from '../observability/index.ts';
import {
  type Clients,
  createClients,
  type FunctionName,
  loadConfig,
  REQUIRED_SETTINGS,
} from '../support/index.ts';

export type Env = Record<string, string | undefined>;

/** EMF metrics are written unless `POWERTOOLS_METRICS_DISABLED` turns them off. */
export function publishesMetrics(env: Env): boolean {
  const disabled = env.POWERTOOLS_METRICS_DISABLED;
  return disabled === undefined || disabled === '' || !/^(1|true|yes|on)$/i.test(disabled);
}

/**
 * What every function builds once (at module scope in Lambda): its telemetry, its checked
 * configuration and its SDK clients. The local runtime calls the same factories with the
 * environment from the synthesized template and clients of its own.
 */
export function boot(name: FunctionName, env: Env = process.env, clients?: Clients) {
  const telemetry = new Telemetry({
    logger: new Logger({ serviceName: `lethe-${name}` }),
    ...(publishesMetrics(env)
      ? {
          metrics: new Metrics({
            namespace: METRICS_NAMESPACE,
            // The stack's name on AWS (each stack its own series); `lethe` locally.
            serviceName: env.POWERTOOLS_SERVICE_NAME || METRICS_DIMENSIONS.service,
          }),
        }
      : {}),
  });
  const config = loadConfig(env, REQUIRED_SETTINGS[name]);
  const sdk = clients ?? createClients();
  for (const client of Object.values(sdk)) countRetries(client);
  return { telemetry, config, clients: sdk };
}

export const errorText = (error: unknown) =>
  error instanceof Error ? error.message : String(error);
