import { dispatcherHandler } from '#lib/handlers.ts';
import { boot } from './runtime.ts';

const { pipeline, logger } = boot('lethe-dispatcher');

export const handler = dispatcherHandler(pipeline.dispatcher, logger);
