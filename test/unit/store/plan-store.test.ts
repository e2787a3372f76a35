import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { clockOf, newPlan } from '../../../lib/core/index.ts';
import { documentClient, keys, PlanStore, Table, TTL_ATTRIBUTE } from '../../../lib/store/index.ts';
import { aStream, TABLE } from '../../helpers/records.ts';

const dynamodb = mockClient(DynamoDBDocumentClient);
const PLAN_ID = '0b7f3c1e-2d4a-4e5f-8a9b-1c2d3e4f5a6b';
const REQUESTED = new Date('2026-03-01T12:00:00.000Z');
const DAY_MS = 86_400_000;
const plan = newPlan(aStream(), PLAN_ID, REQUESTED, { pageSize: 1000, workerConcurrency: 20 });

/** The plan's item as DynamoDB holds it: with the TTL its request wrote, a week on. */
const stored = {
  ...keys.plan(PLAN_ID),
  ...plan,
  [TTL_ATTRIBUTE]: Math.floor(REQUESTED.getTime() / 1000) + 7 * 86_400,
};

function planStore(now: Date) {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  return new PlanStore({ table, clock: clockOf(() => now) });
}

beforeEach(() => {
  dynamodb.reset();
  dynamodb.on(GetCommand).resolves({ Item: stored });
});

describe('PlanStore.get (plans expire a week after they are requested)', () => {
  it('reads a plan within its week', async () => {
    const read = await planStore(new Date(REQUESTED.getTime() + 6 * DAY_MS)).get('acme', PLAN_ID);

    expect(read).toMatchObject({ planId: PLAN_ID, tenant: 'acme', state: 'PENDING' });
  });

  it('does not read a plan whose week is over, though TTL has not removed its item yet', async () => {
    // DynamoDB deletes expired items within days, and reads still return them meanwhile.
    const read = await planStore(new Date(REQUESTED.getTime() + 7 * DAY_MS + 1000)).get(
      'acme',
      PLAN_ID,
    );

    expect(read).toBeUndefined();
  });

  it("does not read another tenant's plan", async () => {
    expect(await planStore(REQUESTED).get('other', PLAN_ID)).toBeUndefined();
  });
});
