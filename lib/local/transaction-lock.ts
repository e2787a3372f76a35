import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * A readers-writer lock over one process's DynamoDB requests: a write runs alone, reads run
 * side by side.
 *
 * Why: moto (the local emulator) does not make DynamoDB writes atomic. A conditional write
 * evaluates its condition and applies itself without a lock, so two concurrent writes can both
 * pass the same condition (seen here: 15 of 200 races double-counted a page); and
 * TransactWriteItems deep-copies every table it touches and, on any failed condition, restores
 * the whole copy, undoing every write other requests made meanwhile (seen here: a concurrent
 * duplicate finalize left a COMPLETED deletion's stream DELETING). DynamoDB needs none of this.
 */
export class TransactionLock {
  #readers = 0;
  #writer = false;
  #waiting: Array<() => void> = [];

  async run<T>(exclusive: boolean, task: () => Promise<T>): Promise<T> {
    while (this.#writer || (exclusive && this.#readers > 0)) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    if (exclusive) this.#writer = true;
    else this.#readers++;
    try {
      return await task();
    } finally {
      if (exclusive) this.#writer = false;
      else this.#readers--;
      for (const wake of this.#waiting.splice(0)) wake();
    }
  }
}

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/** Makes every write of `client` exclusive among the requests sharing `lock`. */
export function serializeWrites(client: DynamoDBClient, lock = new TransactionLock()) {
  client.middlewareStack.add(
    (next, context) => (args) => lock.run(WRITES.has(context.commandName ?? ''), () => next(args)),
    { step: 'initialize', name: 'letheWriteLock' },
  );
  return client;
}
