import { boot } from './runtime.ts';

const { pipeline } = boot('lethe-api');

export const handler = pipeline.api;
