import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { clockOf } from '../../../lib/core/index.ts';
import { documentClient, OffboardingStore, Table } from '../../../lib/store/index.ts';
import { NOW, TABLE } from '../../helpers/records.ts';

const dynamodb = mockClient(DynamoDBDocumentClient);

function offboardingStore() {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  return new OffboardingStore({ table, clock: clockOf(() => NOW) });
}

beforeEach(() => {
  dynamodb.reset();
});

/**
 * The dispatcher's filter lets an offboarding's write through only with `fanoutDue` (see the
 * stack's event sources): each fan-out step must ask for the next one, and a step that takes a
 * page of streams in must not ask for a step per stream (each would redo the page at once).
 */
describe('OffboardingStore: which writes ask for a fan-out step', () => {
  it('asks with the request, and with each step that moves the fan-out on', async () => {
    // Prepare
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    const store = offboardingStore();

    // Act
    const { offboarding } = await store.request('acme', 3600);
    await store.advance(offboarding, 'logs');

    // Assess
    expect(dynamodb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      fanoutDue: true,
      fannedOut: false,
    });
    const [advance] = dynamodb.commandCalls(UpdateCommand);
    expect(advance?.args[0].input.UpdateExpression).toContain('fanoutDue = :true');
    expect(advance?.args[0].input.ExpressionAttributeValues).toMatchObject({ ':true': true });
  });

  it('does not ask when it takes a stream in: that write clears it, and holds only while RUNNING', async () => {
    // Prepare
    dynamodb.on(PutCommand).resolves({});
    const store = offboardingStore();
    const { offboarding } = await store.request('acme', 3600);

    // Act
    const [, count] = store.linkItems(offboarding, 'logs', 'deletion-1');

    // Assess
    expect(count?.Update?.UpdateExpression).toBe(
      'ADD #lethe_sequence :lethe_one, streams :one REMOVE fanoutDue',
    );
    expect(count?.Update?.ConditionExpression).toContain('#state IN (:running0)');
    expect(count?.Update?.ExpressionAttributeValues).toMatchObject({
      ':running0': 'RUNNING',
      ':offboardingId': offboarding.offboardingId,
    });
  });
});
