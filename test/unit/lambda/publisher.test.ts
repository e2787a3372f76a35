import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import type { DeletionRecord } from '../../../lib/core/index.ts';
import { publisherHandler } from '../../../lib/lambda/publisher.ts';
import type { Announcement, PublishResult } from '../../../lib/pipeline/index.ts';
import { streamEvent } from '../../helpers/events.ts';
import { aDeletion } from '../../helpers/records.ts';
import { quietTelemetry } from '../../helpers/telemetry.ts';

type Image = NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];
const image = (item: object) => marshall(item, { removeUndefinedValues: true }) as Image;

/** A MODIFY of a deletion item on the table's stream, with both images. */
const change = (sequence: string, before: DeletionRecord | undefined, after: object) => ({
  eventID: `event-${sequence}`,
  eventName: before ? ('MODIFY' as const) : ('INSERT' as const),
  dynamodb: {
    SequenceNumber: sequence,
    NewImage: image(after),
    ...(before ? { OldImage: image(before) } : {}),
  },
});

const pending = aDeletion({ state: 'PENDING' });
const running = aDeletion({ state: 'RUNNING' });
const other = aDeletion({ deletionId: '9f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c', state: 'PENDING' });

/** A publisher that takes the first `takes` announcements of each run (all by default). */
const publisherTaking = (takes = Number.POSITIVE_INFINITY) => ({
  publish: vi.fn(
    async (announcements: Announcement[]): Promise<PublishResult> =>
      announcements.length <= takes
        ? { published: announcements.length }
        : { published: takes, refused: 'ThrottlingException slow down' },
  ),
});

describe('publisherHandler', () => {
  it('announces the state changes of a batch in one run, in order, and skips writes that changed no state', async () => {
    const publisher = publisherTaking();
    const handler = publisherHandler(publisher, quietTelemetry());

    const response = await handler(
      streamEvent(
        change('1', undefined, pending),
        change('2', pending, running),
        change('3', running, { ...running, chainsSettled: 1 }),
        change('4', undefined, other),
        change('5', undefined, { pk: 'TENANT#acme', sk: 'STREAM#logs', type: 'STREAM' }),
      ),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(publisher.publish).toHaveBeenCalledOnce();
    const [announcements] = publisher.publish.mock.calls[0] ?? [];
    expect(
      announcements?.map((a) => [a.subject, (a.event.detail as { state: string }).state]),
    ).toEqual([
      [`DELETION#${pending.deletionId}`, 'PENDING'],
      [`DELETION#${pending.deletionId}`, 'RUNNING'],
      [`DELETION#${other.deletionId}`, 'PENDING'],
    ]);
  });

  it('fails the record of the first event not put, so Lambda retries from it', async () => {
    const publisher = publisherTaking(1);
    const handler = publisherHandler(publisher, quietTelemetry());

    const response = await handler(
      streamEvent(
        change('1', undefined, pending),
        change('2', running, { ...running, chainsSettled: 1 }),
        change('3', pending, running),
        change('4', undefined, other),
      ),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '3' }] });
  });

  it('fails a record whose image cannot be read, after putting the ones before it (the batch threw)', async () => {
    const publisher = publisherTaking();
    const handler = publisherHandler(publisher, quietTelemetry());
    const malformed = {
      eventID: 'event-2',
      eventName: 'INSERT' as const,
      dynamodb: { SequenceNumber: '2', NewImage: { type: { BOGUS: 'DELETION' } } as never },
    };

    const response = await handler(
      streamEvent(change('1', undefined, pending), malformed, change('3', undefined, other)),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }] });
    const [announcements] = publisher.publish.mock.calls[0] ?? [];
    expect(announcements?.map((a) => a.subject)).toEqual([`DELETION#${pending.deletionId}`]);
  });

  it('fails the first event not put before a malformed record after it', async () => {
    const handler = publisherHandler(publisherTaking(0), quietTelemetry());
    const malformed = {
      eventID: 'event-2',
      eventName: 'INSERT' as const,
      dynamodb: { SequenceNumber: '2', NewImage: { type: { BOGUS: 'DELETION' } } as never },
    };

    const response = await handler(streamEvent(change('1', undefined, pending), malformed));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
  });
});
