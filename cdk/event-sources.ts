import type { Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { LetheFunction } from './lethe-function.ts';

/**
 * Stream records per dispatcher invocation. A tenant's deletions share one partition key, so
 * Lambda hands them to the dispatcher in order, one batch at a time (a parallelization factor
 * would not spread them); the records of one batch dispatch side by side. 40 deletions asked
 * at once were four batches of 10 one after another.
 */
export const DISPATCH_BATCH_SIZE = 100;

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
        // A tenant offboarding's fan-out: each step's write asks for the next one.
        FilterCriteria.filter({
          eventName: FilterRule.or('INSERT', 'MODIFY'),
          dynamodb: {
            NewImage: {
              type: { S: FilterRule.isEqual('OFFBOARDING') },
              state: { S: FilterRule.isEqual('RUNNING') },
              fannedOut: { BOOL: FilterRule.isEqual(false) },
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
