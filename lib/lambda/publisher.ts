import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
} from 'aws-lambda';
import type { DeletionRecord, OffboardingRecord } from '../core/index.ts';
import { count, keysOf, type Telemetry } from '../observability/index.ts';
import { createPipeline, type StateChangePublisher } from '../pipeline/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env, errorText } from './boot.ts';

type Image = NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];

/** A stream image as the record it holds (the images use the SDK's attribute value shape). */
const imageOf = <T = DeletionRecord>(image: Image) =>
  image ? (unmarshall(image as never) as T) : undefined;

/**
 * Publisher: every state change of a deletion, from the table's stream (new and old images),
 * onto the event bus. Records are taken in order and the batch stops at the first failure,
 * which Lambda retries from: no event of a deletion overtakes an earlier one.
 */
export const publisherHandler =
  (publisher: Pick<StateChangePublisher, 'publish' | 'publishOffboarding'>, telemetry: Telemetry) =>
  async (event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> =>
    telemetry.invocation(context, {}, async () => {
      for (const record of event.Records) {
        const after = imageOf<DeletionRecord | OffboardingRecord>(record.dynamodb?.NewImage);
        if (after?.type !== 'DELETION' && after?.type !== 'OFFBOARDING') continue;
        try {
          const outcome =
            after.type === 'DELETION'
              ? await publisher.publish({ before: imageOf(record.dynamodb?.OldImage), after })
              : await publisher.publishOffboarding({
                  before: imageOf<OffboardingRecord>(record.dynamodb?.OldImage),
                  after,
                });
          if (outcome === 'published') {
            count('eventsPublished', 1);
            telemetry.logger.info('state change published', {
              ...keysOf(after),
              type: after.type,
              to: after.state,
            });
          }
        } catch (error) {
          telemetry.logger.warn('publish failed; the record will be retried', {
            ...keysOf(after),
            sequenceNumber: record.dynamodb?.SequenceNumber,
            error: errorText(error),
          });
          return {
            batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }],
          };
        }
      }
      return { batchItemFailures: [] };
    });

export function createPublisherHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('publisher', env, clients);
  const { publisher } = createPipeline({ config, clients: sdk });
  return publisherHandler(publisher, telemetry);
}
