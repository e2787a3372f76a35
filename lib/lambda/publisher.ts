import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
} from 'aws-lambda';
import type { DeletionRecord, OffboardingRecord } from '../core/index.ts';
import { count, keysOf, type Telemetry } from '../observability/index.ts';
import {
  type Announcement,
  createPipeline,
  deletionAnnouncement,
  offboardingAnnouncement,
  type StateChangePublisher,
} from '../pipeline/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env, errorText } from './boot.ts';

type Image = NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];

/** A stream image as the record it holds (the images use the SDK's attribute value shape). */
const imageOf = <T = DeletionRecord>(image: Image) =>
  image ? (unmarshall(image as never) as T) : undefined;

/**
 * Publisher: every state change of a deletion or an offboarding, from the table's stream (new
 * and old images), onto the event bus, in the stream's order, up to ten a call. A refused event
 * fails its record, which Lambda retries from: no event of a deletion overtakes an earlier one.
 */
export const publisherHandler =
  (publisher: Pick<StateChangePublisher, 'publish'>, telemetry: Telemetry) =>
  async (event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> =>
    telemetry.invocation(context, {}, async () => {
      const announced: Array<{
        record: DynamoDBRecord;
        after: Announced;
        announcement: Announcement;
      }> = [];
      // A record whose images cannot be read fails on its own, once the ones before it are on
      // the bus: Lambda retries from it and, its retries spent, hands it to the on-failure queue.
      let malformed: { record: DynamoDBRecord; error: string } | undefined;
      for (const record of event.Records) {
        try {
          const after = imageOf<Announced>(record.dynamodb?.NewImage);
          const announcement = announcementOf(record, after);
          if (after && announcement) announced.push({ record, after, announcement });
        } catch (error) {
          malformed = { record, error: errorText(error) };
          break;
        }
      }
      const { published, refused } = await publisher.publish(
        announced.map(({ announcement }) => announcement),
      );
      if (published > 0) count('eventsPublished', published);
      for (const { after } of announced.slice(0, published)) {
        telemetry.logger.info('state change published', {
          ...keysOf(after),
          type: after.type,
          to: after.state,
        });
      }
      const failed = announced[published];
      if (!failed && malformed) {
        telemetry.logger.warn('malformed record; it will be retried', {
          sequenceNumber: malformed.record.dynamodb?.SequenceNumber,
          error: malformed.error,
        });
        return {
          batchItemFailures: [{ itemIdentifier: malformed.record.dynamodb?.SequenceNumber ?? '' }],
        };
      }
      if (!failed) return { batchItemFailures: [] };
      telemetry.logger.warn('publish failed; the record will be retried', {
        ...keysOf(failed.after),
        sequenceNumber: failed.record.dynamodb?.SequenceNumber,
        error: refused,
      });
      return {
        batchItemFailures: [{ itemIdentifier: failed.record.dynamodb?.SequenceNumber ?? '' }],
      };
    });

type Announced = DeletionRecord | OffboardingRecord;

/** What a record of the table's stream announces, if anything. */
function announcementOf(record: DynamoDBRecord, after: Announced | undefined) {
  if (after?.type === 'DELETION') {
    return deletionAnnouncement({ before: imageOf(record.dynamodb?.OldImage), after });
  }
  if (after?.type === 'OFFBOARDING') {
    const before = imageOf<OffboardingRecord>(record.dynamodb?.OldImage);
    return offboardingAnnouncement({ before, after });
  }
  return undefined;
}

export function createPublisherHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('publisher', env, clients);
  const { publisher } = createPipeline({ config, clients: sdk });
  return publisherHandler(publisher, telemetry);
}
