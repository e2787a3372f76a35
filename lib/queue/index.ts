// lib/queue: the SQS adapter. The work queue: batches of ten, partial failures sent again.
export { MAX_DELAY_SECONDS, WorkQueue, type WorkQueueOptions } from './work-queue.ts';
