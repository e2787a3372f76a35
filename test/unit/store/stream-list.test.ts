import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { clockOf } from '../../../lib/core/index.ts';
import { documentClient, keys, StreamStore, Table } from '../../../lib/store/index.ts';
import { aStream, BUCKET, NOW, TABLE } from '../../helpers/records.ts';

const dynamodb = mockClient(DynamoDBDocumentClient);

function streamStore() {
  const table = new Table(documentClient(new DynamoDBClient({ region: 'us-east-1' })), TABLE);
  return new StreamStore({ table, bucket: BUCKET, root: 'streams', clock: clockOf(() => NOW) });
}

/** A stream's item as the table holds it. */
const item = (stream: string) => ({ ...keys.stream('acme', stream), ...aStream({ stream }) });
const queries = () => dynamodb.commandCalls(QueryCommand).map((call) => call.args[0].input);

beforeEach(() => {
  dynamodb.reset();
});

describe('StreamStore.list (DynamoDB applies Limit before the filter of DELETED streams)', () => {
  it('reads on past deleted streams until the page has a stream, rather than answer an empty page', async () => {
    // Arrange: the first two names are DELETED: a query of Limit 2 evaluates them and returns
    // none (with where it stopped); the next query finds the live stream and the end.
    dynamodb
      .on(QueryCommand)
      .resolvesOnce({ Items: [], LastEvaluatedKey: keys.stream('acme', 'b') })
      .resolves({ Items: [item('c')] });

    // Act
    const page = await streamStore().list('acme', 2);

    // Assess: the live stream is on the first page, and there is no page after it
    expect(page.streams.map((stream) => stream.stream)).toEqual(['c']);
    expect(page.nextToken).toBeUndefined();
    expect(queries()[1]).toMatchObject({ ExclusiveStartKey: keys.stream('acme', 'b'), Limit: 2 });
  });

  it('reads strongly consistent: an offboarding fans out over this list, so a stream just created is in it', async () => {
    dynamodb.on(QueryCommand).resolves({ Items: [item('a')] });

    await streamStore().list('acme', 2);

    expect(queries()).toEqual([expect.objectContaining({ ConsistentRead: true })]);
  });

  it('asks no more than the page lacks, and stops reading once the page is full', async () => {
    dynamodb
      .on(QueryCommand)
      .resolvesOnce({ Items: [item('a')], LastEvaluatedKey: keys.stream('acme', 'b') })
      .resolvesOnce({ Items: [item('c')], LastEvaluatedKey: keys.stream('acme', 'c') })
      .resolves({ Items: [item('d')] });

    const page = await streamStore().list('acme', 2);

    expect(page.streams.map((stream) => stream.stream)).toEqual(['a', 'c']);
    expect(queries().map((input) => input.Limit)).toEqual([2, 1]);
    // The next page starts after the last stream read.
    const next = await streamStore().list('acme', 2, page.nextToken);
    expect(queries()[2]).toMatchObject({ ExclusiveStartKey: keys.stream('acme', 'c') });
    expect(next.streams.map((stream) => stream.stream)).toEqual(['d']);
  });

  it('answers a short page with its nextToken when a bounded number of queries found too few', async () => {
    // Every query finds only deleted names: the page ends, and says where to go on.
    dynamodb.on(QueryCommand).callsFake((input: { ExclusiveStartKey?: { sk: string } }) => ({
      Items: [],
      LastEvaluatedKey: keys.stream('acme', `x${(input.ExclusiveStartKey?.sk.length ?? 0) + 1}`),
    }));

    const page = await streamStore().list('acme', 5);

    expect(page.streams).toEqual([]);
    expect(page.nextToken).toBeDefined();
    expect(queries().length).toBeGreaterThan(1);
    expect(queries().length).toBeLessThanOrEqual(10);
  });
});
