import { createDispatcherHandler } from '#lib/lambda/dispatcher.ts';

export const createHandler = createDispatcherHandler;
export const handler = createHandler();
