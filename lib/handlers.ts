import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import { z } from 'zod';
import type { DeletionRef, Dispatcher } from './dispatch.ts';
import { InvalidMessageError } from './errors.ts';
import { parseWorkMessage } from './messages.ts';
import { NAME_PATTERN } from './names.ts';
import type { PageWorker } from './page-worker.ts';
import type { Sweeper } from './sweeper.ts';

/** The part of a deletion's stream image the dispatcher needs. */
const DeletionImage = z.object({
  type: z.literal('DELETION'),
  tenant: z.string().regex(NAME_PATTERN),
  deletionId: z.uuid(),
  round: z.int().min(1),
  state: z.literal('PENDING'),
});

export function deletionRefOf(record: DynamoDBRecord): DeletionRef {
  const image = record.dynamodb?.NewImage;
  if (!image) throw new InvalidMessageError('stream record has no new image');
  // The stream's images use the SDK's attribute value shape.
  const result = DeletionImage.safeParse(unmarshall(image as never));
  if (!result.success) throw new InvalidMessageError(`not a pending deletion: ${result.error}`);
  const { tenant, deletionId, round } = result.data;
  return { tenant, deletionId, round };
}

/**
 * Dispatcher: each new (or re-opened) deletion on the table's stream is planned and fanned
 * out. Failures are reported per record, so Lambda retries from the failed one, bisects, and
 * finally hands the record to the on-failure destination.
 */
export const dispatcherHandler =
  (dispatcher: Dispatcher, logger: Logger) => async (event: DynamoDBStreamEvent) =>
    processPartialResponse(
      event,
      async (record: DynamoDBRecord) => {
        const ref = deletionRefOf(record);
        const outcome = await dispatcher.dispatch(ref);
        logger.info('dispatched', { ...ref, outcome });
      },
      // One processor per invocation: it holds the batch's state.
      new BatchProcessor(EventType.DynamoDBStreams),
      { throwOnFullBatchFailure: false },
    );

/** Worker: one message, one page; failures are reported per message (partial batch). */
export const workerHandler =
  (worker: PageWorker, logger: Logger) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> =>
    processPartialResponse(
      event,
      async (record: SQSRecord) => {
        let message: ReturnType<typeof parseWorkMessage> | undefined;
        try {
          message = parseWorkMessage(record.body);
          const result = await worker.handle(message);
          logger.info('work done', { ...message, ...result });
        } catch (error) {
          logger.warn('work failed; the message will be redelivered', {
            messageId: record.messageId,
            receiveCount: record.attributes?.ApproximateReceiveCount,
            ...(message ?? {}),
            error: error instanceof Error ? error.message : String(error),
          });
          throw error;
        }
      },
      new BatchProcessor(EventType.SQS),
      { throwOnFullBatchFailure: false },
    );

/** Sweeper: scheduled; resumes stalled deletions. */
export const sweeperHandler = (sweeper: Sweeper, logger: Logger) => async () => {
  const report = await sweeper.sweep();
  logger.info('swept', { ...report });
  return report;
};
