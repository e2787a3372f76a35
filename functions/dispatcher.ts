import type { Clients } from '#lib/clients.ts';
import { dispatcherHandler } from '#lib/handlers.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) => {
  const { pipeline, logger } = boot('lethe-dispatcher', env, clients);
  return dispatcherHandler(pipeline.dispatcher, logger);
};

export const handler = createHandler();
