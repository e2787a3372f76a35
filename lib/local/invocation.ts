/** Lambda's words for an invocation that ran past its function's timeout. */
export class TaskTimedOutError extends Error {
  constructor(seconds: number) {
    super(`Task timed out after ${seconds.toFixed(2)} seconds`);
    this.name = 'TaskTimedOutError';
  }
}

/**
 * A handler held to its function's timeout, as Lambda holds it: an invocation that has not ended
 * after `seconds` fails with "Task timed out", which its event source takes as a function error
 * (an SQS batch comes back after its visibility timeout, a stream batch is retried or bisected).
 * Lambda would stop the invocation's work there; here it goes on in this process, which the
 * pipeline's idempotent steps make harmless, but its answer is no longer waited for.
 */
export function withTimeout<E, R>(
  handler: (event: E) => Promise<R>,
  seconds: number,
): (event: E) => Promise<R> {
  return (event) => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TaskTimedOutError(seconds)), seconds * 1000);
    });
    return Promise.race([handler(event), timedOut]).finally(() => clearTimeout(timer));
  };
}
