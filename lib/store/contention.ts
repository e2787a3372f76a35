import {
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { RETRY, retry } from '../support/index.ts';
import { recordOf } from './layout.ts';

/**
 * DynamoDB's refusals for contention on an item: a transaction cancelled because another one
 * is in flight on one of its items, and a single-item write refused because a transaction is
 * working on its item. Neither applies anything, so trying again is safe.
 */

/** Reads why a transaction was cancelled, or returns undefined for any other error. */
export function cancellationOf(error: unknown) {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const reasons = error.CancellationReasons ?? [];
  const failed = reasons.flatMap((reason, index) =>
    reason.Code === 'ConditionalCheckFailed' ? [index] : [],
  );
  const first = failed[0];
  const item = first === undefined ? undefined : reasons[first]?.Item;
  return {
    failed,
    ...(item ? { old: recordOf(unmarshall(item)) } : {}),
    conflict: reasons.some(
      (reason) => reason.Code === 'TransactionConflict' || reason.Code === 'ThrottlingError',
    ),
  };
}

/**
 * Sends a single-item write (PutItem, UpdateItem), again while DynamoDB refuses it with
 * TransactionConflictException: the item is part of a transaction under way. The SDK does not
 * retry that error (it is neither throttling nor transient to it). DynamoDB applies nothing of
 * a write it refuses so, so the next try is the write's first application, never a second:
 * safe for conditional writes and increments alike.
 */
export function writeOnce<T>(send: () => Promise<T>): Promise<T> {
  return retry(RETRY.contention, async () => {
    try {
      return { done: true, value: await send() };
    } catch (error) {
      if (!(error instanceof TransactionConflictException)) throw error;
      return { done: false, why: 'the item is in a transaction under way' };
    }
  });
}
