import type { Clients } from '#lib/clients.ts';
import { workerHandler } from '#lib/handlers.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) => {
  const { pipeline, telemetry } = boot('lethe-worker', env, clients);
  return workerHandler(pipeline.worker, telemetry);
};

export const handler = createHandler();
