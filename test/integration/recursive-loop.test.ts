import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlanView } from '../../lib/core/index.ts';
import type { CfnTemplate } from '../../lib/local/template.ts';
import { waitForEnd } from '../helpers/cells.ts';
import { apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Lambda's recursive loop detection, modelled by the local runtime (loopDetection): a chain of
 * pages is a chain of messages to the worker's own queue, and Lambda stops the 17th invocation
 * of one chain unless the function says RecursiveLoop Allow. Pages of 2 keys make a 25-page
 * chain of 50 objects.
 */
const OBJECTS = 50;
const SETTINGS = { LETHE_PAGE_SIZE: '2' };

/** The template as it was before the function said Allow: Lambda's default, Terminate. */
const terminates =
  (entry: string) =>
  (template: CfnTemplate): CfnTemplate => {
    for (const resource of Object.values(template.Resources)) {
      if (resource.Metadata?.['lethe:entry'] === entry) delete resource.Properties?.RecursiveLoop;
    }
    return template;
  };

/** Messages in a dead-letter queue: the work queue's (`WorkDeadLetters`) or the plans'. */
async function deadLetters(target: TestTarget, queueId = 'WorkDeadLetters'): Promise<number> {
  const local = target.local;
  if (!local) throw new Error('a local stack is needed');
  const queue = local.resources.queues.find((candidate) => candidate.logicalId.startsWith(queueId));
  const { Attributes } = await local.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue?.url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

/** A stream of OBJECTS objects in one partition. */
async function oneChain(target: TestTarget) {
  const api = apiClient(target.baseUrl);
  const tenant = `t${Date.now().toString(36)}`;
  const created = await api.create(tenant, 'logs');
  const where = parseLocation(String(created.body.location));
  await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, OBJECTS, 1));
  return { api, tenant, where };
}

/** A plan of that stream requested, and its id. */
async function planOneChain(target: TestTarget) {
  const { api, tenant } = await oneChain(target);
  const reply = await api.call<PlanView>('POST', `/v1/tenants/${tenant}/streams/logs/plans`);
  expect(reply.status).toBe(202);
  const read = async () =>
    (await api.call<PlanView>('GET', `/v1/tenants/${tenant}/plans/${reply.body.planId}`)).body;
  return { read };
}

/** The deletion of that stream requested. */
async function deleteOneChain(target: TestTarget) {
  const { api, tenant, where } = await oneChain(target);
  const deletion = await api.delete(tenant, 'logs');
  expect(deletion.status).toBe(202);
  return { api, tenant, where, deletionId: String(deletion.body.deletionId) };
}

describe.skipIf(process.env.LETHE_TEST_API_URL)('a chain of more than 16 pages', () => {
  let target: TestTarget | undefined;
  afterEach(async () => {
    await target?.stop();
    target = undefined;
  });

  it('stalls with RecursiveLoop Terminate: its page goes to the dead-letter queue', async () => {
    // Prepare: no sweep, which would resume the chain
    target = await startTarget({
      loopDetection: true,
      template: terminates('functions/worker.ts'),
      sweepIntervalSeconds: 3600,
      settings: SETTINGS,
    });

    // Act
    const { api, tenant, where, deletionId } = await deleteOneChain(target);
    const local = target;
    await waitFor(
      'a page in the dead-letter queue',
      async () => (await deadLetters(local)) > 0 || undefined,
      120_000,
      500,
    );

    // Assess: stopped at the 17th worker page, the deletion has not ended and data is left
    const { body } = await api.deletion(tenant, deletionId);
    expect(body.state).toBe('RUNNING');
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBeGreaterThan(0);
  }, 180_000);

  it('completes with the stack as it is (the worker says Allow), no page dead-lettered', async () => {
    // Prepare
    target = await startTarget({
      loopDetection: true,
      sweepIntervalSeconds: 3600,
      settings: SETTINGS,
    });

    // Act
    const { api, tenant, where, deletionId } = await deleteOneChain(target);
    const ended = await waitForEnd(api, tenant, deletionId, 150_000);

    // Assess
    expect(ended).toMatchObject({ state: 'COMPLETED', objectsDeleted: OBJECTS });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
    expect(await deadLetters(target)).toBe(0);
  }, 180_000);

  it('stalls a plan of more than 16 pages with the planner on Terminate', async () => {
    // Prepare: no sweep, which would take the plan on again
    target = await startTarget({
      loopDetection: true,
      template: terminates('functions/planner.ts'),
      sweepIntervalSeconds: 3600,
      settings: SETTINGS,
    });

    // Act
    const { read } = await planOneChain(target);
    const local = target;
    await waitFor(
      'a plan page in the dead-letter queue',
      async () => (await deadLetters(local, 'PlansDeadLetters')) > 0 || undefined,
      120_000,
      500,
    );

    // Assess
    expect((await read()).state).not.toMatch(/COMPLETED|FAILED/);
  }, 180_000);

  it('completes a plan of more than 16 pages with the stack as it is (Allow)', async () => {
    // Prepare
    target = await startTarget({
      loopDetection: true,
      sweepIntervalSeconds: 3600,
      settings: SETTINGS,
    });

    // Act
    const { read } = await planOneChain(target);
    const ended = await waitFor(
      'the plan to end',
      async () => {
        const plan = await read();
        return plan.state === 'COMPLETED' || plan.state === 'FAILED' ? plan : undefined;
      },
      150_000,
      300,
    );

    // Assess
    expect(ended).toMatchObject({ state: 'COMPLETED', objects: OBJECTS });
    expect(await deadLetters(target, 'PlansDeadLetters')).toBe(0);
  }, 180_000);
});
