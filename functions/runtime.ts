import { Logger } from '@aws-lambda-powertools/logger';
import { type Clients, createClients } from '#lib/clients.ts';
import { loadConfig } from '#lib/config.ts';
import { createPipeline } from '#lib/pipeline.ts';

export type Env = Record<string, string | undefined>;

/**
 * Builds a function's dependencies once (at module scope in Lambda). The local runtime calls
 * the same entry points with the environment from the synthesized template and its own clients.
 */
export function boot(serviceName: string, env: Env = process.env, clients?: Clients) {
  const logger = new Logger({ serviceName });
  const pipeline = createPipeline({
    config: loadConfig(env),
    clients: clients ?? createClients(env),
    onUnexpectedError: (error) => logger.error('unexpected error', error as Error),
  });
  return { logger, pipeline };
}
