import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { clockOf, StreamDeletingError, type StreamRecord } from '../../../lib/core/index.ts';
import { documentClient, keys, StreamStore, Table } from '../../../lib/store/index.ts';
import { aDeletion, aStream, BUCKET, NOW, TABLE } from '../../helpers/records.ts';

const dynamodb = mockClient(DynamoDBDocumentClient);
const STREAM_KEY = keys.stream('acme', 'logs');
const deleting = aStream({ state: 'DELETING', deletionId: 'd-1' });

function streamStore() {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  return new StreamStore({ table, bucket: BUCKET, root: 'streams', clock: clockOf(() => NOW) });
}

/** DynamoDB's refusal of a conditional write, with the item its condition saw. */
const refusedBy = (old: StreamRecord) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: marshall({ ...STREAM_KEY, ...old }),
  });

const reads = () => dynamodb.commandCalls(GetCommand);
const writes = () => [
  ...dynamodb.commandCalls(PutCommand),
  ...dynamodb.commandCalls(UpdateCommand),
  ...dynamodb.commandCalls(TransactWriteCommand),
];

beforeEach(() => {
  dynamodb.reset();
});

describe('StreamStore (invariant 2: no create or ingest during deletion, decided by a condition)', () => {
  it('admits an ingest with one write conditioned on ACTIVE, without reading first', async () => {
    dynamodb.on(UpdateCommand).resolves({ Attributes: { ...STREAM_KEY, ...aStream() } });

    const admitted = await streamStore().admitIngest('acme', 'logs');

    expect(admitted.state).toBe('ACTIVE');
    expect(reads()).toHaveLength(0);
    expect(writes()).toHaveLength(1);
    expect(dynamodb.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      Key: STREAM_KEY,
      ConditionExpression: '#state IN (:in0)',
      ExpressionAttributeValues: expect.objectContaining({ ':in0': 'ACTIVE' }),
    });
  });

  it('refuses an ingest into a deleting stream with 409 StreamDeleting, from the condition', async () => {
    dynamodb.on(UpdateCommand).rejects(refusedBy(deleting));

    const refused = streamStore().admitIngest('acme', 'logs');

    await expect(refused).rejects.toThrow(StreamDeletingError);
    await expect(refused).rejects.toMatchObject({ status: 409, code: 'StreamDeleting' });
    expect(reads()).toHaveLength(0);
    expect(writes()).toHaveLength(1);
  });

  it('refuses to create a stream whose name is being deleted, from the put condition', async () => {
    dynamodb.on(PutCommand).rejects(refusedBy(deleting));

    await expect(streamStore().create('acme', 'logs')).rejects.toThrow(StreamDeletingError);
    expect(reads()).toHaveLength(0);
    expect(dynamodb.commandCalls(PutCommand)).toHaveLength(1);
    expect(dynamodb.commandCalls(PutCommand)[0]?.args[0].input.ConditionExpression).toBe(
      'attribute_not_exists(pk)',
    );
  });

  it('creates the next incarnation only at the generation its deletion freed', async () => {
    const freed = aStream({ state: 'DELETED', generation: 3 });
    dynamodb.on(PutCommand).rejectsOnce(refusedBy(freed)).resolves({});

    const { created, stream } = await streamStore().create('acme', 'logs');

    expect(created).toBe(true);
    expect(stream).toMatchObject({ generation: 4, prefix: 'streams/acme/logs/4/' });
    const second = dynamodb.commandCalls(PutCommand)[1]?.args[0].input;
    expect(second?.ConditionExpression).toBe(
      '(#state IN (:from0)) AND (#generation = :generation)',
    );
    expect(second?.ExpressionAttributeValues).toEqual({ ':from0': 'DELETED', ':generation': 3 });
  });
});

describe("StreamStore's retention claim (a policy removed or changed since the read is not applied)", () => {
  it('claims the day only while the policy is still the number of days read', async () => {
    dynamodb.on(UpdateCommand).resolves({ Attributes: { ...STREAM_KEY, ...aStream() } });

    const claimed = await streamStore().claimRetentionRun(
      aStream({ retentionDays: 7 }),
      7,
      '2026-03-01',
    );

    expect(claimed).toBe(true);
    const input = dynamodb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input).toMatchObject({
      Key: STREAM_KEY,
      UpdateExpression: 'SET retentionRunOn = :today ADD #lethe_sequence :lethe_one',
    });
    expect(input?.ConditionExpression).toContain('(#retentionDays = :retentionDays)');
    expect(input?.ExpressionAttributeNames).toMatchObject({ '#retentionDays': 'retentionDays' });
    expect(input?.ExpressionAttributeValues).toMatchObject({
      ':retentionDays': 7,
      ':generation': 1,
      ':today': '2026-03-01',
    });
  });

  it('answers false, not an error, when the condition refuses the claim', async () => {
    dynamodb.on(UpdateCommand).rejects(refusedBy(aStream()));

    const claimed = await streamStore().claimRetentionRun(
      aStream({ retentionDays: 7 }),
      7,
      '2026-03-01',
    );

    expect(claimed).toBe(false);
    expect(writes()).toHaveLength(1);
  });
});

describe("StreamStore's partition claim", () => {
  it.each<[string, number | undefined, boolean]>([
    ["a retention run's, only while the policy is still its days, claiming the day", 7, true],
    ["a user's request, whatever the policy", undefined, false],
  ])('is conditioned as %s', (_, policyDays, conditioned) => {
    const run = policyDays === undefined ? undefined : { days: policyDays, today: '2026-03-01' };
    const item = streamStore().claimPartitions(
      aStream({ retentionDays: 7 }),
      aDeletion({ before: '2026-02-22' }),
      run,
    ) as {
      Update?: {
        UpdateExpression?: string;
        ConditionExpression?: string;
        ExpressionAttributeValues?: object;
      };
    };

    const condition = item.Update?.ConditionExpression ?? '';
    expect(condition.includes('#retentionDays = :retentionDays')).toBe(conditioned);
    expect(condition.includes('retentionRunOn < :today')).toBe(conditioned);
    expect(item.Update?.UpdateExpression?.includes('retentionRunOn = :today')).toBe(conditioned);
    expect(condition).toContain('#generation = :generation');
    if (conditioned) {
      expect(item.Update?.ExpressionAttributeValues).toMatchObject({
        ':retentionDays': 7,
        ':today': '2026-03-01',
      });
    }
  });
});
