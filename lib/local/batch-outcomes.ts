import { randomUUID } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';

// What Lambda's event source mappings make of a batch's outcome: which records failed, and what
// a stream mapping's on-failure destination is told of a batch it gave up.

/**
 * Indexes of the records a partial batch response reports failed (none: all succeeded), given
 * each record's identifier (its messageId, or its stream sequence number). As on AWS ("Lambda
 * treats the batch as a complete failure"), every record fails when `batchItemFailures` is not a
 * list (null is none failed, as an empty list) or one of its `itemIdentifier`s is empty, null,
 * not a string or not one of the batch's.
 */
export function failedIndexes(response: unknown, ids: Array<string | undefined>): number[] {
  const { batchItemFailures = [] } = (response ?? {}) as { batchItemFailures?: unknown };
  const all = ids.map((_, index) => index);
  // A null list, as an empty one, is a complete success.
  if (batchItemFailures === null) return [];
  if (!Array.isArray(batchItemFailures)) return all;
  const failed = batchItemFailures.map((failure) => {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    return typeof id === 'string' && id !== '' ? ids.indexOf(id) : -1;
  });
  return failed.includes(-1) ? all : failed;
}

/**
 * The invocation record Lambda sends a stream mapping's on-failure destination for a batch that
 * gave up. Local handlers get no invocation context, so a fresh requestId stands in for the
 * last invocation's; `functionError` is there only when the function threw (not for a partial
 * batch response); the function's ARN is built from the region, the stream's account and the
 * function's logical id.
 */
export function invocationRecord(batch: {
  source: { functionId: string; sourceArn: string };
  region: string;
  shardId: string;
  records: DynamoDBRecord[];
  invokes: number;
  threw: boolean;
}) {
  const { source, region, records } = batch;
  const [first, last] = [records[0]?.dynamodb, records.at(-1)?.dynamodb];
  const arrival = (seconds = 0) => new Date(seconds * 1000).toISOString();
  const account = source.sourceArn.split(':')[4] || '123456789012';
  return {
    requestContext: {
      requestId: randomUUID(),
      functionArn: `arn:aws:lambda:${region}:${account}:function:${source.functionId}`,
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: batch.invokes,
    },
    responseContext: {
      statusCode: 200,
      executedVersion: '$LATEST',
      ...(batch.threw ? { functionError: 'Unhandled' } : {}),
    },
    version: '1.0',
    timestamp: new Date().toISOString(),
    DDBStreamBatchInfo: {
      shardId: batch.shardId,
      startSequenceNumber: first?.SequenceNumber,
      endSequenceNumber: last?.SequenceNumber,
      approximateArrivalOfFirstRecord: arrival(first?.ApproximateCreationDateTime),
      approximateArrivalOfLastRecord: arrival(last?.ApproximateCreationDateTime),
      batchSize: records.length,
      streamArn: source.sourceArn,
    },
  };
}
