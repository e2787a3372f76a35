import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parseWorkMessage, type WorkMessage } from '../core/index.ts';
import { loggedDeletionEvents, type Telemetry } from '../observability/index.ts';
import { createPipeline, type PageWorker } from '../pipeline/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env, errorText } from './boot.ts';
import { countWork } from './work-metrics.ts';

/** Worker: one message, one page; failures are reported per message (partial batch). */
export const workerHandler =
  (worker: Pick<PageWorker, 'handle'>, telemetry: Telemetry) =>
  async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> =>
    telemetry.invocation(context, {}, () =>
      processPartialResponse(
        event,
        async (record: SQSRecord) => {
          // Logged in the message's scope, so the line names its deletion when it is known.
          const failed = (error: unknown, message?: WorkMessage) => {
            telemetry.logger.warn('work failed; the message will be redelivered', {
              messageId: record.messageId,
              receiveCount: record.attributes?.ApproximateReceiveCount,
              ...message,
              error: errorText(error),
            });
            return error;
          };
          let message: WorkMessage;
          try {
            message = parseWorkMessage(record.body);
          } catch (error) {
            throw failed(error);
          }
          await telemetry.scope(message, async () => {
            try {
              const result = await worker.handle(message);
              countWork(result);
              telemetry.logger.info('work done', { ...message, ...result });
            } catch (error) {
              throw failed(error, message);
            }
          });
        },
        new BatchProcessor(EventType.SQS),
        { throwOnFullBatchFailure: false },
      ),
    );

export function createWorkerHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('worker', env, clients);
  const { worker } = createPipeline({ config, clients: sdk, events: loggedDeletionEvents });
  return workerHandler(worker, telemetry);
}
