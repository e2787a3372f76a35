import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type IBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { LIST_INDEX, SWEEP_INDEX, TTL_ATTRIBUTE } from '../lib/store/layout.ts';
import { DEFAULTS, MAX_GRACE_SECONDS } from '../lib/support/config.ts';
import { CertificateKey } from './certificate-key.ts';
import { grantDataAccess, grantListData } from './data-access.ts';
import { LetheFunction } from './lethe-function.ts';
import { LetheMonitoring } from './monitoring.ts';
import { acknowledgeNagFindings } from './nag-suppressions.ts';
import { Plans } from './plans.ts';
import { letheRestApi } from './rest-api.ts';
import { StateEvents } from './state-events.ts';
import { TenantAccess, tenantInvokeStatements } from './tenant-access.ts';

export interface LetheStackProps extends StackProps {
  /** Use this existing bucket for stream data instead of creating one. @default a new bucket */
  readonly bucketName?: string;
  /** First path segment of every stream location. @default 'streams' */
  readonly dataRoot?: string;
  /** Minutes between sweeps. @default 5 */
  readonly sweepIntervalMinutes?: number;
  /** Seconds without progress before the sweeper resumes a deletion. @default 300 */
  readonly staleAfterSeconds?: number;
  /** Attempts before a stalled deletion is marked FAILED. @default 5 */
  readonly maxAttempts?: number;
  /** Most worker invocations at once. @default 20 */
  readonly workerConcurrency?: number;
  /**
   * Keys deleted per second in the bucket by the whole pipeline, across every worker, so that
   * deletions leave S3's per-prefix request rate to live traffic. @default no budget
   */
  readonly maxKeysPerSecond?: number;
  /** Deliveries of a work message before it moves to the dead-letter queue. @default 5 */
  readonly maxReceiveCount?: number;
  /**
   * Seconds a deletion waits, cancellable, when its request names no grace window (0 to
   * 2,592,000). @default 0
   */
  readonly defaultGraceSeconds?: number;
  /** Days a finished receipt stays readable, 1 to 36,500. @default 365 */
  readonly receiptRetentionDays?: number;
  /** Alarm when a deletion has been open (PENDING or RUNNING) longer than this. @default 6 hours */
  readonly maxDeletionAge?: Duration;
  /** Subscribe this address to every alarm through an encrypted SNS topic. @default no topic */
  readonly alarmEmail?: string;
  /**
   * API Gateway access and error logs. They need the account's API Gateway CloudWatch role
   * (README, "Deploying"); turn them off in an account without one. @default true
   */
  readonly apiLogging?: boolean;
  /** Raise to replace the key that signs certificates (old certificates keep verifying). @default 1 */
  readonly certificateKeyVersion?: number;
}

const WORKER_TIMEOUT = Duration.seconds(60);
/**
 * Stream records per dispatcher invocation. A tenant's deletions share one partition key, so
 * Lambda hands them to the dispatcher in order, one batch at a time (a parallelization factor
 * would not spread them); the records of one batch dispatch side by side. 40 deletions asked
 * at once were four batches of 10 one after another.
 */
export const DISPATCH_BATCH_SIZE = 100;

/** Lethe: the API, the tombstone table, the work queue and the four functions. */
export class LetheStack extends Stack {
  /** First path segment of every stream location. */
  public readonly dataRoot: string;
  public readonly table: Table;
  public readonly bucket: IBucket;
  public readonly workQueue: Queue;
  public readonly deadLetterQueue: Queue;
  public readonly dispatchFailures: Queue;
  public readonly api: RestApi;
  public readonly functions: Record<
    'api' | 'dispatcher' | 'worker' | 'sweeper' | 'publisher' | 'planner',
    LetheFunction
  >;
  public readonly events: StateEvents;
  public readonly monitoring: LetheMonitoring;
  public readonly tenantAccess: TenantAccess;
  public readonly certificateKey: CertificateKey;
  public readonly plans: Plans;

  constructor(scope: Construct, id: string, props: LetheStackProps = {}) {
    super(scope, id, props);
    const dataRoot = props.dataRoot ?? DEFAULTS.dataRoot;
    this.dataRoot = dataRoot;
    const receiptRetentionDays = props.receiptRetentionDays ?? DEFAULTS.receiptRetentionDays;
    if (
      !Number.isInteger(receiptRetentionDays) ||
      receiptRetentionDays < 1 ||
      receiptRetentionDays > 36_500
    ) {
      throw new Error(
        `receiptRetentionDays must be an integer from 1 to 36500 (got ${receiptRetentionDays})`,
      );
    }
    const defaultGrace = props.defaultGraceSeconds ?? DEFAULTS.defaultGraceSeconds;
    if (!Number.isInteger(defaultGrace) || defaultGrace < 0 || defaultGrace > MAX_GRACE_SECONDS) {
      throw new Error(
        `defaultGraceSeconds must be an integer from 0 to ${MAX_GRACE_SECONDS} (got ${defaultGrace})`,
      );
    }
    const sweepInterval = Duration.minutes(props.sweepIntervalMinutes ?? 5);
    const dataKeys = `${dataRoot}/*`;

    this.table = new Table(this, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      // New images for the dispatcher; old ones too, so the publisher can tell a change of a
      // deletion's state from any other write to it.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: SWEEP_INDEX,
      partitionKey: { name: 'sweepPk', type: AttributeType.STRING },
      sortKey: { name: 'sweepSk', type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    // A tenant's deletions, newest first. Keys and the state only: a state filter reads the
    // index, the page's items are then read whole, and writes that keep the state (progress,
    // heartbeats) never touch the index.
    this.table.addGlobalSecondaryIndex({
      indexName: LIST_INDEX,
      partitionKey: { name: 'listPk', type: AttributeType.STRING },
      sortKey: { name: 'listSk', type: AttributeType.STRING },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: ['state', 'tenant', 'deletionId'],
    });

    this.bucket = props.bucketName
      ? Bucket.fromBucketName(this, 'Data', props.bucketName)
      : new Bucket(this, 'Data', {
          blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
          encryption: BucketEncryption.S3_MANAGED,
          enforceSSL: true,
          objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
          removalPolicy: RemovalPolicy.RETAIN,
        });

    this.deadLetterQueue = new Queue(this, 'WorkDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.workQueue = new Queue(this, 'Work', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Lambda's guidance: at least six times the function timeout.
      visibilityTimeout: Duration.seconds(WORKER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        maxReceiveCount: props.maxReceiveCount ?? 5,
      },
    });
    this.dispatchFailures = new Queue(this, 'DispatchFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });

    const api = new LetheFunction(this, 'Api', { entry: 'functions/api.ts' });
    const dispatcher = new LetheFunction(this, 'Dispatcher', {
      entry: 'functions/dispatcher.ts',
      timeout: Duration.seconds(60),
    });
    const worker = new LetheFunction(this, 'Worker', {
      entry: 'functions/worker.ts',
      timeout: WORKER_TIMEOUT,
      // One full vCPU: parsing a 1,000-key listing sits on every chain link, and Lambda gives
      // CPU in proportion to memory (BENCHMARKS.md, "Memory"). The heap needs far less.
      memorySize: 1769,
    });
    if (props.maxKeysPerSecond) worker.configure('maxKeysPerSecond', props.maxKeysPerSecond);
    const sweeper = new LetheFunction(this, 'Sweeper', {
      entry: 'functions/sweeper.ts',
      timeout: Duration.seconds(120),
    });
    this.events = new StateEvents(this, 'Events', { table: this.table });
    this.plans = new Plans(this, 'Plans', {
      table: this.table,
      bucket: this.bucket,
      dataKeys,
      ...(props.workerConcurrency ? { concurrency: props.workerConcurrency } : {}),
    });
    // Every function that reads the table sees the same layout settings.
    this.plans.planner
      .configure('dataRoot', dataRoot)
      .configure('receiptRetentionDays', receiptRetentionDays);
    this.functions = {
      api,
      dispatcher,
      worker,
      sweeper,
      publisher: this.events.publisher,
      planner: this.plans.planner,
    };

    const all = [api, dispatcher, worker, sweeper];
    api
      .configure('defaultGraceSeconds', defaultGrace)
      .configure('workerConcurrency', props.workerConcurrency ?? DEFAULTS.workerConcurrency);
    // Plans start in the dispatcher (from the table's stream) and go on in the planner.
    dispatcher.bind('planQueueUrl', this.plans.queue.queueUrl, (f) =>
      this.plans.queue.grantSendMessages(f),
    );
    this.certificateKey = new CertificateKey(this, 'Certificates', {
      ...(props.certificateKeyVersion ? { version: props.certificateKeyVersion } : {}),
    });
    api.bind('certificateKeyId', this.certificateKey.key.keyArn, (f) =>
      this.certificateKey.grantSign(f),
    );
    for (const fn of all) {
      fn.bind('tableName', this.table.tableName, (f) => this.table.grantReadWriteData(f))
        .configure('bucket', this.bucket.bucketName)
        .configure('dataRoot', dataRoot)
        .configure('receiptRetentionDays', receiptRetentionDays);
    }
    for (const fn of [dispatcher, worker, sweeper]) {
      fn.bind('queueUrl', this.workQueue.queueUrl, (f) => {
        this.workQueue.grantSendMessages(f);
        grantListData(f, this.bucket, dataKeys);
      });
    }
    // Least privilege on stream data: only the api writes objects, only the worker deletes them.
    grantDataAccess({ api, dispatcher, worker, sweeper }, this.bucket, dataKeys, !props.bucketName);
    // The worker marks progress at a third of the sweeper's threshold.
    for (const fn of [sweeper, worker]) {
      fn.configure(
        'staleAfterSeconds',
        props.staleAfterSeconds ?? DEFAULTS.staleAfterSeconds,
      ).configure('maxAttempts', props.maxAttempts ?? DEFAULTS.maxAttempts);
    }

    worker.function.addEventSource(
      new SqsEventSource(this.workQueue, {
        batchSize: 5,
        reportBatchItemFailures: true,
        maxConcurrency: props.workerConcurrency ?? 20,
      }),
    );
    dispatcher.function.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: DISPATCH_BATCH_SIZE,
        bisectBatchOnError: true,
        retryAttempts: 5,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.dispatchFailures),
        // Only deletions that are (again) waiting to be dispatched; progress writes are not.
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
    new Rule(this, 'SweepSchedule', {
      schedule: Schedule.rate(sweepInterval),
      targets: [new LambdaFunction(sweeper.function)],
    });

    const apiLogging = props.apiLogging ?? true;
    this.api = letheRestApi(this, 'HttpApi', { handler: api.function, logging: apiLogging });

    this.monitoring = new LetheMonitoring(this, 'Monitoring', {
      workQueue: this.workQueue,
      deadLetterQueue: this.deadLetterQueue,
      dispatchFailures: this.dispatchFailures,
      publishFailures: this.events.failures,
      planDeadLetters: this.plans.deadLetterQueue,
      api: this.api,
      functions: Object.fromEntries(
        Object.entries(this.functions).map(([name, fn]) => [name, fn.function]),
      ),
      sweepInterval,
      maxDeletionAge: props.maxDeletionAge ?? Duration.hours(6),
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
    });
    this.tenantAccess = new TenantAccess(this, 'TenantAccess', { api: this.api });
    acknowledgeNagFindings(this, { apiLogging });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'WorkQueueUrl', { value: this.workQueue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'DispatchFailuresQueueUrl', { value: this.dispatchFailures.queueUrl });
    new CfnOutput(this, 'EventBusName', { value: this.events.bus.eventBusName });
    new CfnOutput(this, 'PlanQueueUrl', { value: this.plans.queue.queueUrl });
    new CfnOutput(this, 'PlanDeadLetterQueueUrl', { value: this.plans.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'CertificateKeyArn', { value: this.certificateKey.key.keyArn });
    new CfnOutput(this, 'PublishFailuresQueueUrl', { value: this.events.failures.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    new CfnOutput(this, 'TenantInvokePolicyArn', {
      description: `Attach to a principal tagged lethe-tenant=<tenant>: it may call only that tenant's routes`,
      value: this.tenantAccess.policy.managedPolicyArn,
    });
    if (this.monitoring.topic) {
      new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    }
  }

  /** For one role per tenant: statements that let a principal call only this tenant's routes. */
  tenantInvokeStatements(tenant: string): PolicyStatement[] {
    return tenantInvokeStatements(this.api, tenant);
  }
}
