import type { Clients } from '#lib/clients.ts';
import { workerHandler } from '#lib/handlers.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) => {
  const { pipeline, logger } = boot('lethe-worker', env, clients);
  return workerHandler(pipeline.worker, logger);
};

export const handler = createHandler();
