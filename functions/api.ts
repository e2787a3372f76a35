import { createApiHandler } from '#lib/lambda/api.ts';

export const createHandler = createApiHandler;
export const handler = createHandler();
