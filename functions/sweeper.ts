import { sweeperHandler } from '#lib/handlers.ts';
import { boot } from './runtime.ts';

const { pipeline, logger } = boot('lethe-sweeper');

export const handler = sweeperHandler(pipeline.sweeper, logger);
