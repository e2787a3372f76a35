import type { Clients } from '#lib/clients.ts';
import { apiHandler } from '#lib/handlers.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) => {
  const { pipeline, telemetry } = boot('lethe-api', env, clients);
  return apiHandler(pipeline.api, telemetry);
};

export const handler = createHandler();
