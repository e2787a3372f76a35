import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface Clients {
  s3: S3Client;
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
 * SDK clients with Lethe's retry budget: the SDK's standard mode retries throttling
 * (503 SlowDown) and 5xx with exponential backoff and full jitter. Endpoints and credentials
 * come from the SDK's own configuration (its environment variables, shared config and profiles),
 * per service where it says so.
 */
export function createClients(options: ClientOptions = {}): Clients {
  return {
    s3: new S3Client({ maxAttempts: 8, forcePathStyle: options.forcePathStyle ?? false }),
    dynamodb: new DynamoDBClient({ maxAttempts: 8 }),
    sqs: new SQSClient({ maxAttempts: 8 }),
    eventbridge: new EventBridgeClient({ maxAttempts: 8 }),
    kms: new KMSClient({ maxAttempts: 8 }),
  };
}
