import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface Clients {
  s3: S3Client;
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
}

/**
 * SDK clients with Lethe's retry budget: the SDK's standard mode retries throttling
 * (503 SlowDown) and 5xx with exponential backoff and full jitter. Endpoints come from
 * `AWS_ENDPOINT_URL`, which emulators set; path-style S3 addressing is used with one.
 */
export function createClients(env: Record<string, string | undefined> = process.env): Clients {
  const emulated = Boolean(env.AWS_ENDPOINT_URL);
  return {
    s3: new S3Client({ maxAttempts: 8, forcePathStyle: emulated }),
    dynamodb: new DynamoDBClient({ maxAttempts: 8 }),
    sqs: new SQSClient({ maxAttempts: 8 }),
  };
}
