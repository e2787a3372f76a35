import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * A readers-writer lock over one process's DynamoDB requests: a write runs alone, reads run
 * side by side.
 *
 * Why: moto (the local emulator) does not make DynamoDB writes atomic. A conditional write
 * evaluates its condition and applies itself without a lock, so two concurrent writes can both
 * pass the same condition (a probe here: 15 of 200 concurrent conditional increments did); and
 * TransactWriteItems deep-copies every table it touches and, on any failed condition, restores
 * the whole copy, undoing every write other requests made meanwhile (seen here: a concurrent
 * duplicate finalize left a COMPLETED deletion's stream DELETING). DynamoDB needs none of this.
 */
export class ReadWriteLock {
  #readers = 0;
  #writer = false;
  /** First come, first served: a waiting write holds back reads that arrive after it. */
  #queue: Array<{ exclusive: boolean; enter: () => void }> = [];

  async run<T>(exclusive: boolean, task: () => Promise<T>): Promise<T> {
    if (this.#queue.length === 0 && this.#canEnter(exclusive)) this.#enter(exclusive);
    else await new Promise<void>((enter) => this.#queue.push({ exclusive, enter }));
    try {
      return await task();
    } finally {
      if (exclusive) this.#writer = false;
      else this.#readers--;
      this.#admit();
    }
  }

  #canEnter(exclusive: boolean) {
    return !this.#writer && (!exclusive || this.#readers === 0);
  }

  #enter(exclusive: boolean) {
    if (exclusive) this.#writer = true;
    else this.#readers++;
  }

  /** Lets in, in order, every waiter that can run now (each is entered before it wakes). */
  #admit() {
    for (let next = this.#queue[0]; next && this.#canEnter(next.exclusive); next = this.#queue[0]) {
      this.#queue.shift();
      this.#enter(next.exclusive);
      next.enter();
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
export function serializeWrites(client: DynamoDBClient, lock = new ReadWriteLock()) {
  client.middlewareStack.add(
    (next, context) => (args) => lock.run(WRITES.has(context.commandName ?? ''), () => next(args)),
    { step: 'initialize', name: 'letheWriteLock' },
  );
  return client;
}
