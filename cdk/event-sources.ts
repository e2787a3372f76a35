import type { Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { LetheFunction } from './lethe-function.ts';

/**
 * Stream records per dispatcher invocation: the records of one batch dispatch side by side. 40
 * deletions asked at once were four batches of 10 one after another.
 */
export const DISPATCH_BATCH_SIZE = 100;

/**
 * Batches of one shard the dispatcher takes at once (Lambda's most). Lambda keeps each item's
 * records in order (its partition and sort key), not a partition key's: a tenant's deletions,
 * which share one, no longer wait for one another's batch. Each handler reads the state it
 * acts on and is idempotent, so records of different items need no order between them.
 */
export const DISPATCH_PARALLELIZATION = 10;

/** AWS's default quota of concurrent executions of a Region's functions (a new account's may be 10). */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

/**
 * The most invocations the stack's event sources and schedule start at once, per shard of the
 * table's stream: the worker's and the planner's SQS sources (`workerConcurrency` each), the
 * dispatcher's batches of a shard, the publisher's one, and the sweeps a run longer than the
 * interval overlaps. The api's (one per request in flight) come on top.
 */
export function eventSourceConcurrency(options: {
  workerConcurrency: number;
  sweeperTimeout: Duration;
  sweepInterval: Duration;
}): number {
  const sweeps = Math.ceil(options.sweeperTimeout.toSeconds() / options.sweepInterval.toSeconds());
  return 2 * options.workerConcurrency + DISPATCH_PARALLELIZATION + 1 + sweeps;
}

/**
 * Refuses a stack whose event sources could invoke more at once than the account runs. Above
 * its quota Lambda throttles an invoke, and a throttled SQS batch goes back to its queue with
 * its receive count one higher: pages throttled `maxReceiveCount` times would reach the
 * dead-letter queue. Within it, the event sources together never run more than the account
 * can (the api's invocations and other functions' come on top: README, "Deploying").
 */
export function assertFitsAccount(needed: number, accountConcurrency: number) {
  if (needed > accountConcurrency) {
    throw new Error(
      `the event sources can run ${needed} invocations at once, above the account's concurrency of ${accountConcurrency} (context accountConcurrency): lower workerConcurrency (each worker or planner counts twice) or raise the account's quota (Service Quotas, Lambda "Concurrent executions", L-B99A9384)`,
    );
  }
}

/** The workers take page messages five at a time, reporting the ones that failed. */
export function workFrom(worker: LetheFunction, queue: IQueue, maxConcurrency: number) {
  worker.function.addEventSource(
    new SqsEventSource(queue, { batchSize: 5, reportBatchItemFailures: true, maxConcurrency }),
  );
}

/**
 * The dispatcher reads the table's stream, filtered to the writes that ask for it: a deletion
 * or plan (again) PENDING, a COMPLETED deletion that an offboarding took in, and an
 * offboarding whose next step is not fanned out yet. Progress writes never invoke it.
 */
export function dispatchFrom(dispatcher: LetheFunction, table: ITable, failures: IQueue) {
  dispatcher.function.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: DISPATCH_BATCH_SIZE,
      parallelizationFactor: DISPATCH_PARALLELIZATION,
      bisectBatchOnError: true,
      retryAttempts: 5,
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(failures),
      filters: [
        FilterCriteria.filter({
          eventName: FilterRule.or('INSERT', 'MODIFY'),
          dynamodb: {
            NewImage: {
              type: { S: FilterRule.or('DELETION', 'PLAN') },
              state: { S: FilterRule.isEqual('PENDING') },
            },
          },
        }),
        // A COMPLETED deletion that an offboarding took in, counted towards it. Any write to
        // such a deletion passes (its link to an offboarding after it completed is how that one
        // is counted); the link's mark makes every count after the first a no-op.
        FilterCriteria.filter({
          eventName: FilterRule.isEqual('MODIFY'),
          dynamodb: {
            NewImage: {
              type: { S: FilterRule.isEqual('DELETION') },
              state: { S: FilterRule.isEqual('COMPLETED') },
              offboardingId: { S: FilterRule.exists() },
            },
          },
        }),
        // A tenant offboarding's fan-out: each step's write asks for the next one
        // (`fanoutDue`); the write that takes a stream in, of which a step makes many, clears it.
        FilterCriteria.filter({
          eventName: FilterRule.or('INSERT', 'MODIFY'),
          dynamodb: {
            NewImage: {
              type: { S: FilterRule.isEqual('OFFBOARDING') },
              state: { S: FilterRule.isEqual('RUNNING') },
              fannedOut: { BOOL: FilterRule.isEqual(false) },
              fanoutDue: { BOOL: FilterRule.isEqual(true) },
            },
          },
        }),
      ],
    }),
  );
}

/** The sweeper runs on a schedule (an EventBridge rule in the stack's scope). */
export function sweepEvery(stack: Stack, sweeper: LetheFunction, interval: Duration) {
  new Rule(stack, 'SweepSchedule', {
    schedule: Schedule.rate(interval),
    targets: [new LambdaFunction(sweeper.function)],
  });
}
