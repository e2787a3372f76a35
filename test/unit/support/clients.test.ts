import { describe, expect, it } from 'vitest';
import { createClients } from '../../../lib/support/index.ts';

describe('createClients', () => {
  it('gives deletes an S3 client that never retries, so a SlowDown reaches the pace', async () => {
    const clients = createClients({ forcePathStyle: true });

    expect(await clients.s3Deletes.config.maxAttempts()).toBe(1);
    expect(clients.s3Deletes.config.forcePathStyle).toBe(true);
  });

  it('keeps the SDK retrying throttling and 5xx on every other client', async () => {
    const clients = createClients();

    for (const client of [clients.s3, clients.dynamodb, clients.sqs, clients.eventbridge]) {
      expect(await client.config.maxAttempts()).toBe(8);
    }
  });
});
