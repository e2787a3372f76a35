import type { Clients } from '#lib/clients.ts';
import { dispatcherHandler } from '#lib/handlers.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) => {
  const { pipeline, telemetry } = boot('lethe-dispatcher', env, clients);
  return dispatcherHandler(pipeline.dispatcher, telemetry);
};

export const handler = createHandler();
