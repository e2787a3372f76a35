/**
 * What a DynamoDB stream record costs moto to serve, by view type:
 * `npx tsx bench/experiments/stream-view.ts` writes 300 chain-like updates to a table streaming
 * NEW_AND_OLD_IMAGES and to one streaming NEW_IMAGE, reads both streams, and reports moto's
 * CPU per record (measured inside moto by bench/moto_server_bulk.py).
 */

import { resolve } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { startMoto } from '#lib/local/emulator.ts';
import { emulatorProfiler } from '../context.ts';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';

const moto = await startMoto(resolve('bench/moto_server_bulk.py'));
try {
  const dynamodb = new DynamoDBClient({ endpoint: moto.endpoint });
  const streams = new DynamoDBStreamsClient({ endpoint: moto.endpoint });
  const profile = emulatorProfiler([moto.endpoint]);
  for (const view of ['NEW_AND_OLD_IMAGES', 'NEW_IMAGE'] as const) {
    const table = `probe-${view}`;
    await dynamodb.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        StreamSpecification: { StreamEnabled: true, StreamViewType: view },
      }),
    );
    for (let index = 0; index < 300; index++) {
      await dynamodb.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: `CHAIN#${index % 10}` } },
          UpdateExpression:
            'SET lastPage = :page, lastKey = :key, objects = :objects, #state = :state',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':page': { N: String(index) },
            ':key': { S: `streams/bench/probe/1/dt=2026-01-0${index % 10}/part-${index}.json` },
            ':objects': { N: '1000' },
            ':state': { S: 'RUNNING' },
          },
        }),
      );
    }
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    const arn = Table?.LatestStreamArn ?? '';
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: arn }));
    let { ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: arn,
        ShardId: StreamDescription?.Shards?.[0]?.ShardId,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    await profile();
    let records = 0;
    while (iterator) {
      const { Records = [], NextShardIterator } = await streams.send(
        new GetRecordsCommand({ ShardIterator: iterator, Limit: 10 }),
      );
      records += Records.length;
      iterator = Records.length > 0 ? NextShardIterator : undefined;
    }
    const cpu = (await profile())['dynamodbstreams.GetRecords']?.cpuSeconds ?? 0;
    console.log(
      `${view}: ${records} records, ${((1000 * cpu) / records).toFixed(2)} ms of moto CPU per record`,
    );
  }
} finally {
  await moto.stop();
}
