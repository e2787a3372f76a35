import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * A readers-writer lock over one process's DynamoDB requests: a transaction runs alone, any
 * other request runs beside any other non-transaction.
 *
 * Why: moto's TransactWriteItems is not isolated. It deep-copies every table it touches,
 * applies the items one by one, and on any failed condition restores the whole copy, undoing
 * every write other requests made meanwhile (seen here: a concurrent duplicate finalize left
 * a COMPLETED deletion's stream DELETING). DynamoDB itself needs none of this.
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

/** Makes every TransactWriteItems of `client` exclusive among this client's requests. */
export function serializeTransactions(client: DynamoDBClient, lock = new TransactionLock()) {
  client.middlewareStack.add(
    (next, context) => (args) =>
      lock.run(context.commandName === 'TransactWriteItemsCommand', () => next(args)),
    { step: 'initialize', name: 'letheTransactionLock' },
  );
  return client;
}
