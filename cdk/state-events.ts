import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LetheFunction } from './lethe-function.ts';

export interface StateEventsProps {
  /** The table whose stream (new and old images) carries every write to a deletion. */
  readonly table: ITable;
}

/**
 * Every state change of a deletion on an EventBridge bus of the stack's own: a publisher
 * function reads the table's stream (the writes are the outbox, so no change is lost between a
 * write and its event) and puts one event per change, in order per deletion.
 */
export class StateEvents extends Construct {
  public readonly bus: EventBus;
  public readonly publisher: LetheFunction;
  /** Stream records the publisher could not publish after its retries. */
  public readonly failures: Queue;

  constructor(scope: Construct, id: string, props: StateEventsProps) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', {
      description: 'Lethe: every state change of a deletion (source lethe)',
    });
    this.failures = new Queue(this, 'PublishFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.publisher = new LetheFunction(this, 'Publisher', {
      entry: 'functions/publisher.ts',
      timeout: Duration.seconds(30),
    });
    this.publisher.bind('eventBusName', this.bus.eventBusName, (fn) =>
      this.bus.grantPutEventsTo(fn),
    );
    this.publisher.function.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 25,
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.failures),
        // Writes to deletions and offboardings only (chain progress never reaches the function).
        filters: [
          FilterCriteria.filter({
            eventName: FilterRule.or('INSERT', 'MODIFY'),
            dynamodb: { NewImage: { type: { S: FilterRule.or('DELETION', 'OFFBOARDING') } } },
          }),
        ],
      }),
    );
  }
}
