import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PLAN_PARTITIONS } from '../lib/store/layout.ts';
import { LetheFunction } from './lethe-function.ts';
import { grantTableUse } from './table-access.ts';

export interface PlansProps {
  readonly table: ITable;
  readonly bucket: IBucket;
  /** The keys of stream data (`streams/*`): the only keys a plan lists. */
  readonly dataKeys: string;
  /** Most planner invocations at once. @default 20 */
  readonly concurrency?: number;
}

const PLANNER_TIMEOUT = Duration.seconds(60);

/**
 * The plan path (dry runs): a queue of plan pages of its own and a planner function that lists
 * and counts. It holds no permission to delete, abort or write any object, nor to write any
 * item of the table but plans: a plan cannot change the data it previews or a stream's state,
 * whatever its code does.
 */
export class Plans extends Construct {
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;
  public readonly planner: LetheFunction;

  constructor(scope: Construct, id: string, props: PlansProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Pages', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(PLANNER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });
    this.planner = new LetheFunction(this, 'Planner', {
      entry: 'functions/planner.ts',
      timeout: PLANNER_TIMEOUT,
      memorySize: 1769,
      // The planner sends a plan chain's next page to the queue that invokes it: a plan of more
      // than about 16 pages is a loop to Lambda, which with Terminate would stop it.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    this.planner
      // Plans and their chains only: the planner cannot write a stream or a deletion.
      .bind('tableName', props.table.tableName, (fn) =>
        grantTableUse(fn, props.table, [PLAN_PARTITIONS]),
      )
      .bind('planQueueUrl', this.queue.queueUrl, (fn) => this.queue.grantSendMessages(fn))
      .configure('bucket', props.bucket.bucketName);
    this.planner.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket', 's3:ListBucketVersions'],
        resources: [props.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [props.dataKeys] } },
      }),
    );
    this.planner.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:ListBucketMultipartUploads'],
        resources: [props.bucket.bucketArn],
      }),
    );
    this.planner.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 5,
        reportBatchItemFailures: true,
        maxConcurrency: props.concurrency ?? 20,
      }),
    );
  }
}
