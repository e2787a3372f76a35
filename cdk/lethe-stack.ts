import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DEFAULTS, type LetheConfig, MAX_GRACE_SECONDS } from '../lib/support/config.ts';
import { CertificateKey } from './certificate-key.ts';
import { grantDataAccess, grantListData } from './data-access.ts';
import {
  assertFitsAccount,
  DEFAULT_ACCOUNT_CONCURRENCY,
  dispatchFrom,
  eventSourceConcurrency,
  sweepEvery,
  workFrom,
} from './event-sources.ts';
import { LetheFunction } from './lethe-function.ts';
import { LetheMonitoring } from './monitoring.ts';
import { acknowledgeNagFindings } from './nag-suppressions.ts';
import { addOutputs } from './outputs.ts';
import { Plans } from './plans.ts';
import { letheRestApi } from './rest-api.ts';
import { StateEvents } from './state-events.ts';
import { dataBucket, tombstoneTable, workQueues } from './storage.ts';
import { grantTableWrites, TABLE_WRITES } from './table-access.ts';
import { TenantAccess, tenantInvokeStatements } from './tenant-access.ts';

export interface LetheStackProps extends StackProps {
  /**
   * Use this existing bucket for stream data instead of creating one. Chosen once, before the
   * first stream: a stream keeps the bucket it was created in, and the grants follow this value.
   * @default a new bucket
   */
  readonly bucketName?: string;
  /**
   * The ARN of the customer-managed KMS key that `bucketName`'s default encryption (SSE-KMS)
   * uses: the api is granted `kms:GenerateDataKey` on it to write events (the key's policy must
   * allow the api's role too). Only with `bucketName`. @default the bucket needs no key of ours
   */
  readonly bucketKeyArn?: string;
  /**
   * First path segment of every stream location. Chosen once, before the first stream: a stream
   * keeps the prefix it was created with, and the grants follow this value. @default 'streams'
   */
  readonly dataRoot?: string;
  /** Minutes between sweeps, 1 to 1,440. @default 5 */
  readonly sweepIntervalMinutes?: number;
  /** Seconds without progress before the sweeper resumes a deletion. @default 300 */
  readonly staleAfterSeconds?: number;
  /** Attempts before a stalled deletion is marked FAILED. @default 5 */
  readonly maxAttempts?: number;
  /** Most worker invocations at once. @default 20 */
  readonly workerConcurrency?: number;
  /**
   * The account's quota of concurrent executions in the Region (a new account's may be 10):
   * the synth refuses event sources that could run more at once. @default 1000, AWS's default
   */
  readonly accountConcurrency?: number;
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
  /** API Gateway access and error logs. @default true */
  readonly apiLogging?: boolean;
  /**
   * With `apiLogging`, set the account's API Gateway CloudWatch role (the logs need one; it is
   * retained with the stack's delete). Turn off where the account's owner sets it. @default true
   */
  readonly apiCloudWatchRole?: boolean;
  /** Raise to replace the key that signs certificates (old certificates keep verifying). @default 1 */
  readonly certificateKeyVersion?: number;
  /** Keys listed and deleted (or counted) per message, 1 to 1,000. @default 1000 */
  readonly pageSize?: number;
  /** Rounds of listing the location afresh before a deletion fails `LocationNotEmpty`. @default 5 */
  readonly maxRounds?: number;
  /** The longest a verification waits for an ingest still in flight, 2 to 900 s. @default 35 */
  readonly ingestGraceSeconds?: number;
  /**
   * Largest events body the api takes, up to 4,500,000 bytes: API Gateway hands the function a
   * body base64-encoded inside Lambda's 6 MiB payload (`MAX_EVENTS_BYTES`). @default 1 MiB
   */
  readonly maxEventsBytes?: number;
  /** `Retry-After` of a 409 `StreamDeleting`, 1 to 3,600 s. @default 30 */
  readonly retryAfterSeconds?: number;
  /** Streams a tenant offboarding takes in per fan-out step, 1 to 1,000. @default 100 */
  readonly offboardingPageSize?: number;
}

/** Settings every function reads alike: set on each of them when a prop names one. */
const SHARED_SETTINGS = [
  'pageSize',
  'maxRounds',
  'ingestGraceSeconds',
  'maxEventsBytes',
  'retryAfterSeconds',
  'offboardingPageSize',
  // The sweepers' threshold, and the heartbeat of every page worker (the dispatcher deletes
  // a deletion's first page itself) and offboarding fan-out (api, dispatcher, sweeper).
  'staleAfterSeconds',
  'maxAttempts',
] as const satisfies ReadonlyArray<keyof LetheStackProps & keyof LetheConfig>;

const WORKER_TIMEOUT = Duration.seconds(60);
const SWEEPER_TIMEOUT = Duration.seconds(120);

/**
 * API Gateway's integration timeout: a request the api took longer over would answer the caller
 * 504 while its write went on.
 */
const API_TIMEOUT = Duration.seconds(29);

/**
 * One full vCPU: parsing a 1,000-key listing sits on every chain link, and Lambda gives CPU in
 * proportion to memory (BENCHMARKS.md, "Memory"). The heap needs far less.
 */
const WORKER_MEMORY_MB = 1769;

/** A whole number in a range, or a synth error that names the prop. */
function integerIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max} (got ${value})`);
  }
  return value;
}

/**
 * The long-running deletion alarm's threshold: at least a minute, since an age of 0 would page
 * for every deletion the moment it opens.
 */
function atLeastAMinute(maxDeletionAge: Duration): Duration {
  if (maxDeletionAge.toSeconds() < 60) {
    throw new Error(
      `maxDeletionAge (context maxDeletionAgeMinutes) must be at least 1 minute (got ${maxDeletionAge.toHumanString()})`,
    );
  }
  return maxDeletionAge;
}

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
    const receiptRetentionDays = integerIn(
      'receiptRetentionDays',
      props.receiptRetentionDays ?? DEFAULTS.receiptRetentionDays,
      1,
      36_500,
    );
    const defaultGrace = integerIn(
      'defaultGraceSeconds',
      props.defaultGraceSeconds ?? DEFAULTS.defaultGraceSeconds,
      0,
      MAX_GRACE_SECONDS,
    );
    // A day at most: the sweeper alarm looks at three intervals, and CloudWatch at most 7 days.
    const sweepInterval = Duration.minutes(
      integerIn('sweepIntervalMinutes', props.sweepIntervalMinutes ?? 5, 1, 1_440),
    );
    // A Stalled verdict closes a stopped chain's open pages a stale interval on: no function that
    // deletes (worker and dispatcher, 60 s) may still be at it then. The local runtime's
    // LETHE_STALE_AFTER_SECONDS may go lower, to watch recovery in seconds.
    if (props.staleAfterSeconds !== undefined) {
      integerIn(
        'staleAfterSeconds',
        props.staleAfterSeconds,
        2 * WORKER_TIMEOUT.toSeconds(),
        86_400,
      );
    }
    const dataKeys = `${dataRoot}/*`;

    this.table = tombstoneTable(this);
    this.bucket = dataBucket(this, props.bucketName, props.bucketKeyArn);
    const queues = workQueues(this, {
      workerTimeout: WORKER_TIMEOUT,
      maxReceiveCount: props.maxReceiveCount ?? 5,
    });
    this.workQueue = queues.work;
    this.deadLetterQueue = queues.deadLetters;
    this.dispatchFailures = queues.dispatchFailures;

    // The api's plans assume the workers' concurrency; configured first, so a value out of range
    // fails the synth with the function's own message before an event source is made with it.
    const api = new LetheFunction(this, 'Api', {
      entry: 'functions/api.ts',
      timeout: API_TIMEOUT,
    }).configure('workerConcurrency', props.workerConcurrency ?? DEFAULTS.workerConcurrency);
    const dispatcher = new LetheFunction(this, 'Dispatcher', {
      entry: 'functions/dispatcher.ts',
      timeout: Duration.seconds(60),
      // The worker's CPU: a batch of up to 100 records parses a 1,000-key listing and builds a
      // DeleteObjects body for each, the first page of every round it starts.
      memorySize: WORKER_MEMORY_MB,
    });
    const worker = new LetheFunction(this, 'Worker', {
      entry: 'functions/worker.ts',
      timeout: WORKER_TIMEOUT,
      memorySize: WORKER_MEMORY_MB,
      // The worker sends a chain's next page (and its deferred and finalize messages) to the
      // work queue that invokes it: a chain of more than about 16 pages is a loop to Lambda,
      // which with Terminate would stop it and move its page to the dead-letter queue.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    // The bucket's key budget holds wherever pages are deleted: the dispatcher deletes a round's
    // first page.
    // The api's plans estimate how long a deletion takes under it.
    if (props.maxKeysPerSecond) {
      for (const fn of [dispatcher, worker, api])
        fn.configure('maxKeysPerSecond', props.maxKeysPerSecond);
    }
    const sweeper = new LetheFunction(this, 'Sweeper', {
      entry: 'functions/sweeper.ts',
      timeout: SWEEPER_TIMEOUT,
    });
    this.events = new StateEvents(this, 'Events', { table: this.table });
    this.plans = new Plans(this, 'Plans', {
      table: this.table,
      bucket: this.bucket,
      dataKeys,
      ...(props.workerConcurrency ? { concurrency: props.workerConcurrency } : {}),
    });
    // Every function that reads the table sees the same layout and settings.
    for (const fn of [api, dispatcher, worker, sweeper, this.plans.planner]) {
      fn.configure('dataRoot', dataRoot).configure('receiptRetentionDays', receiptRetentionDays);
      for (const setting of SHARED_SETTINGS) {
        const value = props[setting];
        if (value !== undefined) fn.configure(setting, value);
      }
    }
    this.functions = {
      api,
      dispatcher,
      worker,
      sweeper,
      publisher: this.events.publisher,
      planner: this.plans.planner,
    };

    const tableUsers = { api, dispatcher, worker, sweeper };
    api.configure('defaultGraceSeconds', defaultGrace);
    // Plans start in the dispatcher (from the table's stream) and go on in the planner; the
    // sweeper sends again the pages of a plan that stopped counting.
    for (const fn of [dispatcher, sweeper]) {
      fn.bind('planQueueUrl', this.plans.queue.queueUrl, (f) =>
        this.plans.queue.grantSendMessages(f),
      );
    }
    this.certificateKey = new CertificateKey(this, 'Certificates', {
      ...(props.certificateKeyVersion !== undefined
        ? { version: props.certificateKeyVersion }
        : {}),
    });
    api.bind('certificateKeyId', this.certificateKey.key.keyArn, (f) =>
      this.certificateKey.grantSign(f),
    );
    // Each reads any item, and writes only the partitions it owns (`dynamodb:LeadingKeys`).
    for (const name of Object.keys(tableUsers) as (keyof typeof tableUsers)[]) {
      tableUsers[name]
        .bind('tableName', this.table.tableName, (f) =>
          grantTableWrites(f, this.table, TABLE_WRITES[name]),
        )
        .configure('bucket', this.bucket.bucketName);
    }
    for (const fn of [dispatcher, worker, sweeper]) {
      fn.bind('queueUrl', this.workQueue.queueUrl, (f) => {
        this.workQueue.grantSendMessages(f);
        grantListData(f, this.bucket, dataKeys);
      });
    }
    // Least privilege on stream data: only the api writes objects, only the worker deletes them.
    grantDataAccess({ api, dispatcher, worker, sweeper }, this.bucket, dataKeys, !props.bucketName);
    // No throttle of the stack's own making: a throttled page comes back with its receive count
    // one higher, and would reach the dead-letter queue after maxReceiveCount of them.
    assertFitsAccount(
      eventSourceConcurrency({
        workerConcurrency: props.workerConcurrency ?? DEFAULTS.workerConcurrency,
        sweeperTimeout: SWEEPER_TIMEOUT,
        sweepInterval,
      }),
      integerIn(
        'accountConcurrency',
        props.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY,
        1,
        1_000_000,
      ),
    );
    workFrom(worker, this.workQueue, props.workerConcurrency ?? 20);
    dispatchFrom(dispatcher, this.table, this.dispatchFailures);
    sweepEvery(this, sweeper, sweepInterval);

    const apiLogging = props.apiLogging ?? true;
    this.api = letheRestApi(this, 'HttpApi', {
      handler: api.function,
      logging: apiLogging,
      cloudWatchRole: props.apiCloudWatchRole ?? true,
    });

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
      maxDeletionAge: atLeastAMinute(props.maxDeletionAge ?? Duration.hours(6)),
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
    });
    this.tenantAccess = new TenantAccess(this, 'TenantAccess', { api: this.api });
    acknowledgeNagFindings(this, { apiLogging });

    addOutputs(this);
  }

  /** For one role per tenant: statements that let a principal call only this tenant's routes. */
  tenantInvokeStatements(tenant: string): PolicyStatement[] {
    return tenantInvokeStatements(this.api, tenant);
  }
}
