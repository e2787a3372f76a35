import type { Clients } from '#lib/clients.ts';
import { boot, type Env } from './runtime.ts';

export const createHandler = (env?: Env, clients?: Clients) =>
  boot('lethe-api', env, clients).pipeline.api;

export const handler = createHandler();
