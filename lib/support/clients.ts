import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface Clients {
  s3: S3Client;
  /** S3 for deletes: no retries of its own, so a SlowDown reaches the chain's pace. */
  s3Deletes: S3Client;
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  eventbridge: EventBridgeClient;
  kms: KMSClient;
}

export interface ClientOptions {
  /** Path-style S3 addressing, for endpoints without per-bucket host names. @default false */
  readonly forcePathStyle?: boolean;
}

/**
 * SDK clients with Lethe's retry budget: the SDK's standard mode retries throttling and 5xx
 * with exponential backoff and full jitter, except on `s3Deletes`, whose retries the page
 * deleter makes itself. Endpoints and credentials
 * come from the SDK's own configuration (its environment variables, shared config and profiles),
 * per service where it says so.
 */
export function createClients(options: ClientOptions = {}): Clients {
  const forcePathStyle = options.forcePathStyle ?? false;
  return {
    s3: new S3Client({ maxAttempts: 8, forcePathStyle }),
    // The page deleter retries what passes with time; a SlowDown slows its chain instead.
    s3Deletes: new S3Client({ maxAttempts: 1, forcePathStyle }),
    dynamodb: new DynamoDBClient({ maxAttempts: 8 }),
    sqs: new SQSClient({ maxAttempts: 8 }),
    eventbridge: new EventBridgeClient({ maxAttempts: 8 }),
    kms: new KMSClient({ maxAttempts: 8 }),
  };
}
