import { createSweeperHandler } from '#lib/lambda/sweeper.ts';

export const createHandler = createSweeperHandler;
export const handler = createHandler();
