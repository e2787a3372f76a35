import { Logger } from '@aws-lambda-powertools/logger';
import { createClients } from '#lib/clients.ts';
import { loadConfig } from '#lib/config.ts';
import { createPipeline } from '#lib/pipeline.ts';

/** Built once per Lambda environment (module scope), shared by the four entry points. */
export function boot(serviceName: string) {
  const logger = new Logger({ serviceName });
  const pipeline = createPipeline({
    config: loadConfig(),
    clients: createClients(),
    onUnexpectedError: (error) => logger.error('unexpected error', error as Error),
  });
  return { logger, pipeline };
}
