import type { Clients } from '#lib/clients.ts';
import { sweeperHandler } from '#lib/handlers.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) => {
  const { pipeline, telemetry } = boot('lethe-sweeper', env, clients);
  return sweeperHandler(pipeline.sweeper, pipeline.store, telemetry);
};

export const handler = createHandler();
