import { workerHandler } from '#lib/handlers.ts';
import { boot } from './runtime.ts';

const { pipeline, logger } = boot('lethe-worker');

export const handler = workerHandler(pipeline.worker, logger);
