import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForEnd } from '../helpers/cells.ts';
import { apiClient, parseLocation } from '../helpers/http.ts';
import { listAll, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * An account whose Lambda concurrency (16 here, modelled by the local runtime's
 * accountConcurrency) is below the event sources' default maximum (20 workers and 20
 * planners): above it Lambda throttles, and a throttled SQS batch comes back with its receive
 * count one higher, on its way to the dead-letter queue. The stack is synthesized for the
 * account (context accountConcurrency, which refuses event sources that could run more at once
 * than it), so nothing of the stack's own is throttled and no page is dead-lettered.
 */
const ACCOUNT = 16;
const PREFIXES = 200;
const PER_PREFIX = 6;

/** Messages in the dead-letter queues of the work and plan queues. */
async function deadLetters(target: TestTarget): Promise<number> {
  const local = target.local;
  if (!local) throw new Error('a local stack is needed');
  let total = 0;
  for (const queue of local.resources.queues.filter((candidate) =>
    /DeadLetters/.test(candidate.logicalId),
  )) {
    const { Attributes } = await local.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    total += Number(Attributes?.ApproximateNumberOfMessages ?? 0);
    total += Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  return total;
}

describe.skipIf(process.env.LETHE_TEST_API_URL)('an account of 16 concurrent executions', () => {
  let target: TestTarget;
  beforeAll(async () => {
    target = await startTarget({
      accountConcurrency: ACCOUNT,
      // Two workers and two planners, the dispatcher's 10 batches, the publisher's and a sweep.
      stackProps: { accountConcurrency: ACCOUNT, workerConcurrency: 2 },
      // A throttled batch would come back (and count a receive) every 2 s.
      visibilityTimeoutSeconds: 2,
      settings: { LETHE_PAGE_SIZE: '3' },
    });
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('deletes a stream of 200 chains exactly, nothing throttled or dead-lettered', async () => {
    // Prepare: 200 prefixes of two pages each, a chain apiece
    const api = apiClient(target.baseUrl);
    const tenant = `t${Date.now().toString(36)}`;
    const created = await api.create(tenant, 'logs');
    const where = parseLocation(String(created.body.location));
    const objects = Array.from({ length: PREFIXES * PER_PREFIX }, (_, index) => ({
      key: `${where.prefix}p${String(index % PREFIXES).padStart(3, '0')}/part-${index}.json`,
      body: `{"n":${index}}`,
    }));
    await seedObjects(target.s3, where.bucket, objects);

    // Act
    const deletion = await api.delete(tenant, 'logs');
    const ended = await waitForEnd(api, tenant, String(deletion.body.deletionId), 280_000);

    // Assess
    expect(ended).toMatchObject({ state: 'COMPLETED', objectsDeleted: PREFIXES * PER_PREFIX });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
    expect(await deadLetters(target)).toBe(0);
    expect(target.local?.account?.throttles).toBe(0);
  }, 300_000);
});
