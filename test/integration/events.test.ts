import { randomUUID } from 'node:crypto';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCell, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient, waitFor } from '../helpers/http.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

interface Delivered {
  source: string;
  'detail-type': string;
  detail: {
    deletionId: string;
    tenant: string;
    state: string;
    objectsDeleted: number;
    sequence: number;
    changedAt: string;
  };
}

/**
 * Every state change of a deletion on the stack's event bus, read the way a subscriber would:
 * an EventBridge rule delivering to an SQS queue.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('state-change events', () => {
  let target: TestTarget;
  let api: ApiClient;
  const sqs = new SQSClient({});
  const events = new EventBridgeClient({});

  beforeAll(async () => {
    target = await startTarget();
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  /** A queue subscribed to the bus by a rule matching `pattern`. */
  async function subscribe(pattern: Record<string, unknown>) {
    const bus = target.local?.resources.buses[0];
    if (!bus) throw new Error('the local stack has no event bus');
    const name = `sub-${randomUUID().slice(0, 8)}`;
    const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await events.send(
      new PutRuleCommand({ Name: name, EventBusName: bus, EventPattern: JSON.stringify(pattern) }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: name,
        EventBusName: bus,
        Targets: [{ Id: 'queue', Arn: Attributes?.QueueArn ?? '' }],
      }),
    );
    const received: Delivered[] = [];
    const drain = async () => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      received.push(...Messages.map((message) => JSON.parse(message.Body ?? '{}') as Delivered));
      return received;
    };
    return { bus, drain };
  }

  const statesOf = (received: Delivered[], deletionId: string) =>
    received
      .filter((event) => event.detail.deletionId === deletionId)
      .map((event) => event.detail.state);

  it('announces SCHEDULED, PENDING, RUNNING and COMPLETED, in order, for a deletion with a window', async () => {
    // Prepare
    const tenant = `e${randomUUID().slice(0, 8)}`;
    const subscription = await subscribe({ source: ['lethe'], detail: { tenant: [tenant] } });
    const cell = await prepareCell(api, target.s3, tenant, 10);

    // Act
    const { body } = await api.delete(tenant, 'logs', '?graceSeconds=1');
    const id = String(body.deletionId);
    const receipt = await waitForEnd(api, tenant, id);

    // Assess
    const received = await waitFor('four events', async () => {
      const all = await subscription.drain();
      return statesOf(all, id).length >= 4 ? all : undefined;
    });
    expect(statesOf(received, id)).toEqual(['SCHEDULED', 'PENDING', 'RUNNING', 'COMPLETED']);
    // Each change's place among the deletion's writes: growing, so a consumer can drop a replay.
    const sequences = received
      .filter((event) => event.detail.deletionId === id)
      .map((event) => event.detail.sequence);
    expect(sequences[0]).toBe(1);
    expect(sequences.every((sequence, at) => at === 0 || sequence > (sequences[at - 1] ?? 0))).toBe(
      true,
    );
    const completed = received.find((event) => event.detail.state === 'COMPLETED');
    expect(completed).toMatchObject({
      source: 'lethe',
      'detail-type': 'Deletion State Change',
      detail: { tenant, objectsDeleted: cell.objects },
    });
    expect(receipt.state).toBe('COMPLETED');
  });

  it('announces SCHEDULED and CANCELLED for a deletion taken back', async () => {
    const tenant = `e${randomUUID().slice(0, 8)}`;
    const subscription = await subscribe({ source: ['lethe'], detail: { tenant: [tenant] } });
    await api.create(tenant, 'logs');
    const id = String((await api.delete(tenant, 'logs', '?graceSeconds=600')).body.deletionId);

    await api.cancel(tenant, id);

    const received = await waitFor('two events', async () => {
      const all = await subscription.drain();
      return statesOf(all, id).length >= 2 ? all : undefined;
    });
    expect(statesOf(received, id)).toEqual(['SCHEDULED', 'CANCELLED']);
  });

  it("delivers nothing of another tenant's deletion to a rule filtered by tenant", async () => {
    const tenant = `e${randomUUID().slice(0, 8)}`;
    const other = `o${randomUUID().slice(0, 8)}`;
    const subscription = await subscribe({ source: ['lethe'], detail: { tenant: [tenant] } });
    await api.create(other, 'logs');
    const id = String((await api.delete(other, 'logs')).body.deletionId);
    await waitForEnd(api, other, id);
    // A deletion of the subscribed tenant after it: once its events arrive, the other's would
    // have too.
    await api.create(tenant, 'logs');
    const mine = String((await api.delete(tenant, 'logs')).body.deletionId);
    await waitForEnd(api, tenant, mine);

    const received = await waitFor("the subscribed tenant's events", async () => {
      const all = await subscription.drain();
      return statesOf(all, mine).includes('COMPLETED') ? all : undefined;
    });
    expect(received.every((event) => event.detail.tenant === tenant)).toBe(true);
    expect(statesOf(received, id)).toEqual([]);
  });
});
