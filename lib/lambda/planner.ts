import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type PlanPageMessage, parsePlanMessage } from '../core/index.ts';
import { loggedDeletionEvents, type Telemetry } from '../observability/index.ts';
import { createPipeline, type Planner } from '../pipeline/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env, errorText } from './boot.ts';

/**
 * Planner: one plan page per message, listed and counted (never deleted); failures are
 * reported per message, and a message that keeps failing goes to the plan queue's DLQ.
 */
export const plannerHandler =
  (planner: Pick<Planner, 'page'>, telemetry: Telemetry) =>
  async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> =>
    telemetry.invocation(context, {}, () =>
      processPartialResponse(
        event,
        async (record: SQSRecord) => {
          const failed = (error: unknown, message?: PlanPageMessage) => {
            telemetry.logger.warn('plan page failed; the message will be redelivered', {
              messageId: record.messageId,
              receiveCount: record.attributes?.ApproximateReceiveCount,
              ...message,
              error: errorText(error),
            });
            return error;
          };
          let message: PlanPageMessage;
          try {
            message = parsePlanMessage(record.body);
          } catch (error) {
            throw failed(error);
          }
          await telemetry.scope({ tenant: message.tenant }, async () => {
            try {
              const outcome = await planner.page(message);
              telemetry.logger.info('plan page', { ...message, outcome });
            } catch (error) {
              throw failed(error, message);
            }
          });
        },
        new BatchProcessor(EventType.SQS),
        { throwOnFullBatchFailure: false },
      ),
    );

export function createPlannerHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('planner', env, clients);
  const { planner } = createPipeline({ config, clients: sdk, events: loggedDeletionEvents });
  return plannerHandler(planner, telemetry);
}
