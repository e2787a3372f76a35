import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** A document client that drops `undefined` attributes, so optional fields can be spread. */
export const documentClient = (client = new DynamoDBClient({})) =>
  DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });

/** The item a failed condition saw (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`). */
export function oldItemOf<T>(error: ConditionalCheckFailedException): T | undefined {
  const item = error.Item as Record<string, AttributeValue> | undefined;
  return item ? (unmarshall(item) as T) : undefined;
}

export const isConditionFailure = (error: unknown): error is ConditionalCheckFailedException =>
  error instanceof ConditionalCheckFailedException;

export interface Cancellation {
  /** Index of the first item whose condition failed, if any. */
  failedIndex: number;
  /** The old item of that failed condition, when the request asked for it. */
  oldItem?: Record<string, unknown>;
  /** True when DynamoDB cancelled because of a concurrent transaction: try again. */
  conflict: boolean;
}

/** Reads why a transaction was cancelled, or returns undefined for any other error. */
export function cancellationOf(error: unknown): Cancellation | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const reasons = error.CancellationReasons ?? [];
  const failedIndex = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
  const item = failedIndex >= 0 ? reasons[failedIndex]?.Item : undefined;
  return {
    failedIndex,
    ...(item ? { oldItem: unmarshall(item) } : {}),
    conflict: reasons.some(
      (reason) => reason.Code === 'TransactionConflict' || reason.Code === 'ThrottlingError',
    ),
  };
}

/** Expression attribute names used across the table; `state` is a reserved word. */
export const names = { '#state': 'state' } as const;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exponential backoff with full jitter, in milliseconds. */
export const backoff = (attempt: number, baseMs = 50, capMs = 2_000) =>
  Math.random() * Math.min(capMs, baseMs * 2 ** attempt);

/** A strongly consistent read of one item: every decision in Lethe reads its latest state. */
export async function readItem<T>(
  client: DynamoDBDocumentClient,
  tableName: string,
  key: { pk: string; sk: string },
): Promise<T | undefined> {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
  );
  return Item as T | undefined;
}
