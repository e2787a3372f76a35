import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { percentile } from './stats.ts';

export interface TransactionCost {
  /** Items in the table (each write also left a stream record). */
  items: number;
  transactMs: number;
  putMs: number;
}

const TABLE = 'bench-transaction-probe';

/**
 * What one TransactWriteItems costs moto as its table grows: moto deep-copies every table a
 * transaction touches (items and stream records) before applying it, so the cost grows with
 * the table's history, while a PutItem does not. Median of five, on a table of its own.
 */
export async function probeTransactions(
  dynamodb: DynamoDBClient,
  sizes: number[],
): Promise<TransactionCost[]> {
  await dynamodb.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  const costs: TransactionCost[] = [];
  let items = 0;
  for (const size of sizes) {
    while (items < size) {
      const count = Math.min(25, size - items);
      const requests = Array.from({ length: count }, (_, index) => ({
        PutRequest: {
          Item: {
            pk: { S: `DELETION#${items + index}` },
            sk: { S: 'CHAIN#1#0' },
            state: { S: 'RUNNING' },
            prefix: { S: `streams/bench/probe/1/dt=2026-01-${String(index).padStart(2, '0')}/` },
          },
        },
      }));
      await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: requests } }));
      items += count;
    }
    const transact: number[] = [];
    const put: number[] = [];
    for (let round = 0; round < 5; round++) {
      const key = { pk: { S: `PROBE#${size}#${round}` }, sk: { S: 'PAGE' } };
      let started = performance.now();
      await dynamodb.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: key } },
            {
              Update: {
                TableName: TABLE,
                Key: { pk: { S: 'DELETION#0' }, sk: { S: 'CHAIN#1#0' } },
                UpdateExpression: 'SET touched = :round',
                ExpressionAttributeValues: { ':round': { N: String(round) } },
              },
            },
          ],
        }),
      );
      transact.push(performance.now() - started);
      started = performance.now();
      await dynamodb.send(
        new PutItemCommand({ TableName: TABLE, Item: { ...key, sk: { S: 'PUT' } } }),
      );
      put.push(performance.now() - started);
    }
    costs.push({ items, transactMs: percentile(transact, 50), putMs: percentile(put, 50) });
  }
  return costs;
}

/** Items in a table, and records in its stream, e.g. after the acknowledgement phase. */
export async function tableHistory(
  dynamodb: DynamoDBClient,
  endpoint: string,
  tableName: string,
): Promise<{ items: number; streamRecords: number }> {
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  const streams = new DynamoDBStreamsClient({ endpoint });
  let streamRecords = 0;
  if (Table?.LatestStreamArn) {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: Table.LatestStreamArn }),
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      let { ShardIterator: iterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: Table.LatestStreamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      );
      while (iterator) {
        const { Records = [], NextShardIterator } = await streams.send(
          new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
        );
        streamRecords += Records.length;
        iterator = Records.length > 0 ? NextShardIterator : undefined;
      }
    }
  }
  return { items: Table?.ItemCount ?? 0, streamRecords };
}
