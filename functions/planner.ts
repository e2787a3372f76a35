import { createPlannerHandler } from '#lib/lambda/planner.ts';

export const createHandler = createPlannerHandler;
export const handler = createHandler();
