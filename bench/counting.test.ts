import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { Clients } from '../lib/support/index.ts';
import { type CountSnapshot, economyOf, itemsOf, RequestCounter } from './counting.ts';

/** An SQS client whose HTTP handler answers `statuses` in turn, without a network. */
function sqsAnswering(statuses: number[]) {
  let call = 0;
  const handle = async () => {
    const statusCode = statuses[Math.min(call++, statuses.length - 1)] ?? 200;
    const body = statusCode === 200 ? { Successful: [], Failed: [] } : { __type: 'InternalError' };
    return {
      response: {
        statusCode,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: new TextEncoder().encode(JSON.stringify(body)),
      },
    };
  };
  return new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 3,
    requestHandler: { handle } as never,
  });
}

const batchOf = (count: number) =>
  new SendMessageBatchCommand({
    QueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/work',
    Entries: Array.from({ length: count }, (_, index) => ({
      Id: String(index),
      MessageBody: '{}',
    })),
  });

const attach = (counter: RequestCounter, sqs: SQSClient) =>
  counter.attach({
    sqs,
    s3: { middlewareStack: { add() {} } },
    s3Deletes: { middlewareStack: { add() {} } },
    dynamodb: { middlewareStack: { add() {} } },
  } as unknown as Clients);

describe('RequestCounter', () => {
  it('counts the messages of a SendMessageBatch beside the call that carried them', async () => {
    const counter = new RequestCounter();
    const sqs = sqsAnswering([200]);
    attach(counter, sqs);

    await sqs.send(batchOf(3));
    await sqs.send(batchOf(10));

    const tally = counter.snapshot().sqs.SendMessageBatch;
    expect(tally).toMatchObject({ calls: 2, attempts: 2, items: 13, errors: 0 });
    expect(economyOf(counter.snapshot())).toMatchObject({ sqsSendCalls: 2, sqsMessages: 13 });
  });

  it('counts every HTTP attempt of a retried call, as AWS bills them', async () => {
    const counter = new RequestCounter();
    const sqs = sqsAnswering([500, 200]);
    attach(counter, sqs);

    await sqs.send(batchOf(1));

    expect(counter.snapshot().sqs.SendMessageBatch).toMatchObject({ calls: 1, attempts: 2 });
    expect(economyOf(counter.snapshot()).retries).toBe(1);
  });

  it('forgets everything on reset', async () => {
    const counter = new RequestCounter();
    const sqs = sqsAnswering([200]);
    attach(counter, sqs);
    await sqs.send(batchOf(2));

    counter.reset();

    expect(counter.snapshot().sqs).toEqual({});
  });
});

describe('itemsOf', () => {
  it.each([
    ['SendMessageBatch', { Entries: [{}, {}] }, undefined, 2],
    ['ReceiveMessage', {}, { Messages: [{}, {}, {}] }, 3],
    ['ReceiveMessage', {}, {}, 0],
    ['TransactWriteItems', { TransactItems: [{}, {}, {}] }, undefined, 3],
    ['BatchWriteItem', { RequestItems: { a: [{}, {}], b: [{}] } }, undefined, 3],
    ['BatchGetItem', { RequestItems: { a: { Keys: [{}, {}] } } }, undefined, 2],
    ['DeleteObjects', { Delete: { Objects: [{}, {}, {}, {}] } }, undefined, 4],
    ['GetItem', {}, undefined, 1],
  ])('%s carries its items', (command, input, output, items) => {
    expect(itemsOf(command, input, output)).toBe(items);
  });
});

describe('economyOf', () => {
  const tally = (calls: number, items: number, empty = 0) => ({
    calls,
    attempts: calls,
    items,
    empty,
    errors: 0,
    ms: [],
  });

  it('charges two write units per transactional item and one per standard write', () => {
    const snapshot: CountSnapshot = {
      s3: { ListObjectsV2: tally(22, 22), DeleteObjects: tally(20, 20_000) },
      sqs: { ReceiveMessage: tally(30, 20, 12), DeleteMessageBatch: tally(18, 20) },
      dynamodb: {
        TransactWriteItems: tally(40, 100),
        PutItem: tally(10, 10),
        GetItem: tally(60, 60),
        Query: tally(2, 20),
      },
    };

    expect(economyOf(snapshot)).toMatchObject({
      s3Requests: 42,
      s3ByCommand: { ListObjectsV2: 22, DeleteObjects: 20 },
      sqsPollCalls: 48,
      sqsPollEmptyReceives: 12,
      sqsReceivesWithMessages: 18,
      dynamoWriteCalls: 50,
      dynamoWriteItems: 110,
      dynamoWriteUnits: 210,
      dynamoReadCalls: 62,
      dynamoReadUnits: 62,
    });
  });
});
