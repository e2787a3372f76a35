import type { SQSClient } from '@aws-sdk/client-sqs';
import { AccountConcurrency } from './account-concurrency.ts';
import {
  carryLineage,
  currentLineage,
  invokedOnce,
  LineageLedger,
  runWithLineage,
} from './lineage.ts';
import type { LocalFunction, LocalQueue } from './provision.ts';
import type { QueuePollerOptions } from './queue-poller.ts';

type Invoke<E, R> = (event: E) => Promise<R>;

/**
 * What Lambda does around an invocation that the local runtime models only when asked (tests
 * turn them on): recursive loop detection, and the account's concurrency shared by every
 * function's invocations.
 */
export class LambdaModel {
  readonly #ledger: LineageLedger | undefined;
  readonly account: AccountConcurrency | undefined;
  #running = true;

  constructor(
    options: { loopDetection?: boolean; accountConcurrency?: number },
    /** The handlers' SQS client: what they send carries their lineage. */
    sqs: SQSClient,
  ) {
    this.#ledger = options.loopDetection ? new LineageLedger() : undefined;
    if (this.#ledger) carryLineage(sqs, this.#ledger);
    this.account =
      options.accountConcurrency !== undefined
        ? new AccountConcurrency(options.accountConcurrency)
        : undefined;
  }

  /** A function's handler, each invocation one more in its chain's lineage (a new chain unless a message began it). */
  invocation<E, R>(fn: LocalFunction, handler: Invoke<E, R>): Invoke<E, R> {
    if (!this.#ledger) return handler;
    return (event) =>
      runWithLineage(invokedOnce(currentLineage() ?? {}, fn.logicalId), () => handler(event));
  }

  /** A stream batch or an asynchronous invoke: throttled, it is retried until it gets through. */
  retriedWhenThrottled<E, R>(invoke: Invoke<E, R>): Invoke<E, R> {
    return this.account ? this.account.gate(invoke, () => !this.#running) : invoke;
  }

  /** What an SQS event source of this queue and function does about loops and throttles. */
  queueOptions(
    queue: LocalQueue,
    fn: LocalFunction | undefined,
    queues: LocalQueue[],
  ): Pick<QueuePollerOptions, 'visibilityTimeoutSeconds' | 'loops' | 'account'> {
    const deadLetterUrl = queues.find((candidate) => candidate.arn === queue.deadLetterArn)?.url;
    return {
      visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds,
      ...(this.#ledger
        ? {
            loops: {
              ledger: this.#ledger,
              terminate: fn?.recursiveLoop !== 'Allow',
              ...(deadLetterUrl ? { deadLetterUrl } : {}),
            },
          }
        : {}),
      ...(this.account ? { account: this.account } : {}),
    };
  }

  /** Ends the throttled invokes still waiting for the account's concurrency. */
  stop() {
    this.#running = false;
  }
}
