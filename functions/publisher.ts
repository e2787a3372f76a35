import { createPublisherHandler } from '#lib/lambda/publisher.ts';

export const createHandler = createPublisherHandler;
export const handler = createHandler();
