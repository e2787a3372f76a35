import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { documentClient } from '../../lib/store/index.ts';
import { armFailpoint, disarmFailpoints } from '../../lib/support/index.ts';
import { assertCellCompleted, prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { type FaultPlan, faultyClients } from '../helpers/faults.ts';
import { apiClient, waitFor } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/** Invariants 4 and 8 under injected faults: retried, never double counted, visibly failed. */
const SETTINGS = {
  LETHE_PAGE_SIZE: '25',
  LETHE_STALE_AFTER_SECONDS: '3',
  LETHE_MAX_ATTEMPTS: '50',
};

describe('deleting under injected faults', () => {
  let target: TestTarget | undefined;
  afterEach(async () => {
    disarmFailpoints();
    await target?.stop();
    target = undefined;
  });

  const start = async (plan: FaultPlan) => {
    const faults = faultyClients(plan);
    target = await startTarget({
      settings: SETTINGS,
      visibilityTimeoutSeconds: 3,
      wrapClients: faults.wrap,
    });
    return { target, api: apiClient(target.baseUrl), counts: faults.counts };
  };

  it('retries throttling and 5xx everywhere, and still counts exactly', async () => {
    const { target, api, counts } = await start({
      s3SlowDown: 0.15,
      s3InternalError: 0.1,
      keyInternalError: 0.2,
      dynamoThrottle: 0.1,
    });
    const cell = await prepareCell(api, target.s3, 'throttled', 150);

    const receipt = await waitForEnd(api, cell.tenant, await requestDeletion(api, cell.tenant));

    console.info(`faults injected: ${JSON.stringify(counts)}`);
    expect(counts.slowDownDeletes).toBeGreaterThan(0);
    expect(counts.slowDownOthers).toBeGreaterThan(0);
    expect(counts.s3InternalErrors).toBeGreaterThan(0);
    expect(counts.keyErrors).toBeGreaterThan(0);
    expect(counts.throttled).toBeGreaterThan(0);
    expect(receipt.failures).toBeUndefined();
    await assertCellCompleted(api, target.s3, cell, receipt);
  });

  it('survives every message twice, out of order, with some lost (the sweeper finds them)', async () => {
    const { target, api, counts } = await start({
      duplicateMessages: true,
      reorderSeconds: 2,
      // A round's first page is deleted by the dispatcher, so a small cell sends few messages:
      // one in four is lost, whatever the draw.
      loseEvery: 4,
    });
    const cell = await prepareCell(api, target.s3, 'messy', 150);

    const receipt = await waitForEnd(api, cell.tenant, await requestDeletion(api, cell.tenant));

    console.info(`faults injected: ${JSON.stringify(counts)}`);
    expect(counts.duplicated).toBeGreaterThan(0);
    expect(counts.lost).toBeGreaterThan(0);
    await assertCellCompleted(api, target.s3, cell, receipt);
  });

  it('ends FAILED with the refused keys and codes, and a retry completes it', async () => {
    const plan: FaultPlan = { accessDenied: (key) => /part-00001[0-4]\.json$/.test(key) };
    const { target, api } = await start(plan);
    const cell = await prepareCell(api, target.s3, 'denied', 60);
    const deletionId = await requestDeletion(api, cell.tenant);

    const failed = await waitForEnd(api, cell.tenant, deletionId);
    const left = await listAll(target.s3, cell.location.bucket, cell.location.prefix);
    plan.accessDenied = undefined;
    const retry = await api.call(
      'POST',
      `/v1/tenants/${cell.tenant}/deletions/${deletionId}/retry`,
    );
    const completed = await waitForEnd(api, cell.tenant, deletionId);

    expect(failed.state).toBe('FAILED');
    expect(failed.failedObjects).toBe(5);
    expect(failed.objectsDeleted).toBe(cell.objects - 5);
    expect((failed.failures as Array<{ key: string; code: string }>).map((f) => f.code)).toEqual(
      Array(5).fill('AccessDenied'),
    );
    expect(new Set((failed.failures as Array<{ key: string }>).map((f) => f.key))).toEqual(
      new Set(left.keys()),
    );
    expect(retry.status).toBe(202);
    expect(completed.attempts).toBeGreaterThanOrEqual(2);
    await assertCellCompleted(api, target.s3, cell, completed);
  });

  /** A stack whose sweeper gives a deletion up as Stalled after two looks without progress. */
  const startStalling = async () => {
    target = await startTarget({
      settings: { ...SETTINGS, LETHE_MAX_ATTEMPTS: '2' },
      visibilityTimeoutSeconds: 2,
    });
    return { target, api: apiClient(target.baseUrl) };
  };

  it('marks a deletion that never progresses FAILED (Stalled), and a retry completes it', async () => {
    const { target, api } = await startStalling();
    const cell = await prepareCell(api, target.s3, 'stalled', 30);
    armFailpoint('worker.after-list', 'error', 1_000_000);

    const deletionId = await requestDeletion(api, cell.tenant);
    const stalled = await waitForEnd(api, cell.tenant, deletionId);
    disarmFailpoints();
    const retry = await api.call(
      'POST',
      `/v1/tenants/${cell.tenant}/deletions/${deletionId}/retry`,
    );
    const completed = await waitForEnd(api, cell.tenant, deletionId);

    // No worker ever got past its listing; the dispatcher deleted the round's first page.
    expect(stalled.state).toBe('FAILED');
    expect(stalled.objectsDeleted).toBeLessThan(cell.objects);
    expect(stalled.failures).toEqual([{ code: 'Stalled', message: expect.any(String) }]);
    // The first run and one resume: the claim that gave the verdict was no attempt.
    expect(stalled.attempts).toBe(2);
    expect(retry.status).toBe(202);
    await assertCellCompleted(api, target.s3, cell, completed);
  });

  it('counts what a stalled deletion deleted but never counted, in its FAILED receipt and after a retry', async () => {
    const { target, api } = await startStalling();
    const cell = await prepareCell(api, target.s3, 'uncounted', 60);
    // Every page's delete reaches S3, and every count after it fails, until the deletion stalls.
    armFailpoint('worker.after-delete', 'error', 1_000_000);

    const deletionId = await requestDeletion(api, cell.tenant);
    const stalled = await waitForEnd(api, cell.tenant, deletionId);
    const left = await listAll(target.s3, cell.location.bucket, cell.location.prefix);
    disarmFailpoints();
    await api.call('POST', `/v1/tenants/${cell.tenant}/deletions/${deletionId}/retry`);
    const completed = await waitForEnd(api, cell.tenant, deletionId);

    expect(stalled.failures).toEqual([{ code: 'Stalled', message: expect.any(String) }]);
    expect(stalled.attempts).toBe(2);
    // The FAILED receipt counts exactly what is gone; the retry counts the rest.
    expect(left.size).toBeLessThan(cell.objects);
    expect(stalled.objectsDeleted).toBe(cell.objects - left.size);
    await assertCellCompleted(api, target.s3, cell, completed);
  });

  it('moves a malformed work message to the DLQ without stopping the pipeline', async () => {
    const { target, api } = await start({});
    const queues = target.local?.resources.queues ?? [];
    const work = queues.find(
      (queue) => queue.logicalId.startsWith('Work') && !queue.logicalId.includes('Dead'),
    );
    const dlq = queues.find((queue) => queue.logicalId.startsWith('WorkDeadLetters'));
    const sqs = target.local?.clients.sqs;
    if (!work || !dlq || !sqs) throw new Error('the local stack has no work queue');
    const garbage = ['{"v":1,"type":"page","prefix":"streams/"}', 'not json at all'];
    for (const body of garbage)
      await sqs.send(new SendMessageCommand({ QueueUrl: work.url, MessageBody: body }));

    const cell = await prepareCell(api, target.s3, 'poisoned', 40);
    const receipt = await waitForEnd(api, cell.tenant, await requestDeletion(api, cell.tenant));
    const dead = await waitFor(
      'the malformed messages in the DLQ',
      async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: dlq.url,
            AttributeNames: ['ApproximateNumberOfMessages'],
          }),
        );
        return Number(Attributes?.ApproximateNumberOfMessages) >= garbage.length ? true : undefined;
      },
      90_000,
      1_000,
    );
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlq.url, MaxNumberOfMessages: 10 }),
    );

    expect(dead).toBe(true);
    expect(Messages.map((message) => message.Body).sort()).toEqual([...garbage].sort());
    await assertCellCompleted(api, target.s3, cell, receipt);
  });

  it('sends a malformed stream record to the on-failure queue and keeps dispatching', async () => {
    const { target, api } = await start({});
    const local = target.local;
    if (!local) throw new Error('needs the local stack');
    const failures = local.resources.queues.find((queue) =>
      queue.logicalId.startsWith('DispatchFailures'),
    );
    if (!failures) throw new Error('no dispatch failure queue');
    // Passes the stream filter (a PENDING deletion) but is not one the dispatcher can read.
    await documentClient(local.clients.dynamodb).send(
      new PutCommand({
        TableName: local.resources.tableName,
        Item: {
          pk: 'TENANT#Bad!',
          sk: 'DELETION#nope',
          type: 'DELETION',
          state: 'PENDING',
          round: 'one',
        },
      }),
    );

    const cell = await prepareCell(api, target.s3, 'afterbad', 40);
    const receipt = await waitForEnd(api, cell.tenant, await requestDeletion(api, cell.tenant));
    const record = await waitFor(
      'the bad record in the on-failure queue',
      async () => {
        const { Messages = [] } = await local.clients.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: failures.url, WaitTimeSeconds: 1 }),
        );
        return Messages[0]?.Body ? JSON.parse(Messages[0].Body) : undefined;
      },
      90_000,
      500,
    );

    expect(record).toMatchObject({
      requestContext: { condition: 'RetryAttemptsExhausted' },
      DDBStreamBatchInfo: { batchSize: 1 },
    });
    await assertCellCompleted(api, target.s3, cell, receipt);
  });
});
