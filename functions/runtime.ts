import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { type Clients, createClients } from '#lib/clients.ts';
import { loadConfig } from '#lib/config.ts';
import { METRICS_DIMENSIONS, METRICS_NAMESPACE } from '#lib/metrics.ts';
import { countRetries, Telemetry } from '#lib/observability.ts';
import { createPipeline } from '#lib/pipeline.ts';

export type Env = Record<string, string | undefined>;

/**
 * EMF only means something in a Lambda's log group: against an emulator (`AWS_ENDPOINT_URL`)
 * metrics are off unless `POWERTOOLS_METRICS_DISABLED=false` asks for them.
 */
export function publishesMetrics(env: Env): boolean {
  const disabled = env.POWERTOOLS_METRICS_DISABLED;
  if (disabled !== undefined && disabled !== '') return !/^(1|true|yes|on)$/i.test(disabled);
  return !env.AWS_ENDPOINT_URL;
}

/**
 * Builds a function's dependencies once (at module scope in Lambda). The local runtime calls
 * the same entry points with the environment from the synthesized template and its own clients.
 */
export function boot(serviceName: string, env: Env = process.env, clients?: Clients) {
  const telemetry = new Telemetry({
    logger: new Logger({ serviceName }),
    ...(publishesMetrics(env)
      ? {
          metrics: new Metrics({
            namespace: METRICS_NAMESPACE,
            serviceName: METRICS_DIMENSIONS.service,
          }),
        }
      : {}),
  });
  const sdk = clients ?? createClients(env);
  for (const client of Object.values(sdk)) countRetries(client);
  const pipeline = createPipeline({
    config: loadConfig(env),
    clients: sdk,
    onUnexpectedError: (error) => telemetry.logger.error('unexpected error', error as Error),
  });
  return { telemetry, pipeline };
}
