import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type IBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { LIST_INDEX, SWEEP_INDEX, TTL_ATTRIBUTE } from '../lib/store/layout.ts';

/*
 * The stack's stateful resources. Each is created in the stack's own scope, under the id it
 * has always had: a logical ID that changed would make CloudFormation replace the table, the
 * bucket or a queue, and a replaced table loses every tombstone and receipt.
 */

/** The tombstone table: deletions, chains, streams and receipts, with its stream and indexes. */
export function tombstoneTable(stack: Stack): Table {
  const table = new Table(stack, 'Table', {
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
    // Kept when the stack goes, and not deleted by a console or API call either.
    deletionProtection: true,
  });
  table.addGlobalSecondaryIndex({
    indexName: SWEEP_INDEX,
    partitionKey: { name: 'sweepPk', type: AttributeType.STRING },
    sortKey: { name: 'sweepSk', type: AttributeType.STRING },
    projectionType: ProjectionType.ALL,
  });
  // A tenant's deletions, newest first. Keys and the state only: a state filter reads the
  // index, the page's items are then read whole, and writes that keep the state (progress,
  // heartbeats) never touch the index.
  table.addGlobalSecondaryIndex({
    indexName: LIST_INDEX,
    partitionKey: { name: 'listPk', type: AttributeType.STRING },
    sortKey: { name: 'listSk', type: AttributeType.STRING },
    projectionType: ProjectionType.INCLUDE,
    nonKeyAttributes: ['state', 'tenant', 'deletionId'],
  });
  return table;
}

/** A key's own ARN, not an alias's: IAM grants the use of a key by the key's ARN. */
const KEY_ARN =
  /^arn:aws(-[a-z]+)*:kms:[a-z]{2}(-[a-z]+)+-\d:\d{12}:key\/([0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}|mrk-[0-9a-f]{32})$/;

/**
 * The bucket that holds stream data: the one named, with the customer-managed KMS key of its
 * default encryption (SSE-KMS) when one is given, or a new private, encrypted bucket.
 */
export function dataBucket(
  stack: Stack,
  bucketName: string | undefined,
  bucketKeyArn?: string,
): IBucket {
  if (bucketKeyArn !== undefined) {
    if (!bucketName) {
      throw new Error(
        "bucketKeyArn is the KMS key of an existing bucket: give bucketName too (the stack's own bucket uses SSE-S3)",
      );
    }
    if (!KEY_ARN.test(bucketKeyArn)) {
      throw new Error(
        `bucketKeyArn must be a KMS key ARN, arn:<partition>:kms:<region>:<account>:key/<key id> (got ${bucketKeyArn})`,
      );
    }
    const encryptionKey = Key.fromKeyArn(stack, 'DataKey', bucketKeyArn);
    return Bucket.fromBucketAttributes(stack, 'Data', { bucketName, encryptionKey });
  }
  if (bucketName) return Bucket.fromBucketName(stack, 'Data', bucketName);
  return new Bucket(stack, 'Data', {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

export interface WorkQueues {
  /** Page work for the workers. */
  readonly work: Queue;
  /** Work messages delivered `maxReceiveCount` times without success. */
  readonly deadLetters: Queue;
  /** Stream records the dispatcher could not dispatch after its retries. */
  readonly dispatchFailures: Queue;
}

/** Failed work and failed stream records are kept for two weeks, SQS's longest. */
const RETENTION = Duration.days(14);

/** The work queue, its dead-letter queue and the dispatcher's failure queue. */
export function workQueues(
  stack: Stack,
  options: { workerTimeout: Duration; maxReceiveCount: number },
): WorkQueues {
  const deadLetters = new Queue(stack, 'WorkDeadLetters', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: RETENTION,
  });
  const work = new Queue(stack, 'Work', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    // Lambda's guidance: at least six times the function timeout.
    visibilityTimeout: Duration.seconds(options.workerTimeout.toSeconds() * 6),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: options.maxReceiveCount },
  });
  const dispatchFailures = new Queue(stack, 'DispatchFailures', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: RETENTION,
  });
  return { work, deadLetters, dispatchFailures };
}
