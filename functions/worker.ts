import { createWorkerHandler } from '#lib/lambda/worker.ts';

export const createHandler = createWorkerHandler;
export const handler = createHandler();
