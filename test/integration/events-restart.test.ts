import { randomUUID } from 'node:crypto';
import {
  EventBridgeClient,
  ListEventBusesCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { killProcess, type RuntimeProcess, startRuntimeProcess } from '../helpers/process.ts';
import { partitionedObjects, seedObjects } from '../helpers/s3.ts';

interface Heard {
  deletionId: string;
  state: string;
  sequence: number;
}

/** The states each deletion goes through, by what was asked of it. */
const PATHS = {
  plain: ['PENDING', 'RUNNING', 'COMPLETED'],
  cancelled: ['SCHEDULED', 'CANCELLED'],
  expedited: ['SCHEDULED', 'PENDING', 'RUNNING', 'COMPLETED'],
} as const;
const ENDED = ['COMPLETED', 'FAILED', 'CANCELLED'];

/**
 * What a consumer of the bus hears when the local stack is killed mid-run and started again
 * over the same emulator: every change at least once, and, after the sequence rule (drop an
 * event whose sequence is not above the highest heard for its deletion), each deletion's states
 * in lifecycle order with nothing after its end.
 */
describe('state-change events across a kill -9', () => {
  const running: RuntimeProcess[] = [];
  afterEach(async () => {
    for (const runtime of running.splice(0)) await killProcess(runtime, 'SIGTERM');
  });

  it('hears every change, and the sequence rule leaves each deletion in order', async () => {
    // Prepare: a runtime of its own names over the suite's emulator, and a queue on its bus.
    const prefix = `v${randomUUID().slice(0, 8)}`;
    const env = {
      AWS_ENDPOINT_URL: inject('awsEndpoint'),
      LETHE_LOCAL_PREFIX: prefix,
      LETHE_PAGE_SIZE: '5',
      LETHE_LOCAL_WORKER_CONCURRENCY: '2',
      LETHE_SWEEP_INTERVAL_SECONDS: '1',
      LETHE_STALE_AFTER_SECONDS: '3',
      LETHE_LOCAL_VISIBILITY_TIMEOUT_SECONDS: '3',
    };
    const first = await startRuntimeProcess(env);
    running.push(first);
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const read = await subscribe(prefix, tenant);
    const api = apiClient(first.url);
    const s3 = new S3Client({ forcePathStyle: true });
    const asked = new Map<string, keyof typeof PATHS>();
    for (const [index, kind] of (['plain', 'plain', 'cancelled', 'expedited'] as const).entries()) {
      const stream = `s${index}`;
      const { body } = await api.create(tenant, stream);
      const where = parseLocation(String(body.location));
      await seedObjects(s3, where.bucket, partitionedObjects(where.prefix, 40, 2));
      const grace = kind === 'plain' ? '' : '?graceSeconds=3600';
      const id = String((await api.delete(tenant, stream, grace)).body.deletionId);
      asked.set(id, kind);
      if (kind === 'cancelled') await api.cancel(tenant, id);
      if (kind === 'expedited') await api.expedite(tenant, id);
    }

    // Act: kill -9 while the deletions run, and start again over the same emulator and names.
    await killProcess(first, 'SIGKILL');
    const second = await startRuntimeProcess(env);
    running.push(second);
    const again = apiClient(second.url);
    for (const id of asked.keys()) {
      await waitFor(
        `deletion ${id} to end`,
        async () => {
          const { body } = await again.deletion(tenant, id);
          return ENDED.includes(String(body.state)) ? true : undefined;
        },
        120_000,
        250,
      );
    }
    const heard = await waitFor('the last events', async () => {
      const all = await read();
      const ends = all.filter((event) => ENDED.includes(event.state)).length;
      return ends >= asked.size ? all : undefined;
    });

    // Assess
    for (const [id, kind] of asked) {
      const events = heard.filter((event) => event.deletionId === id);
      // At least once: every state of its path was heard.
      expect(new Set(events.map((event) => event.state))).toEqual(new Set(PATHS[kind]));
      // The rule: the highest sequence heard so far wins; what is kept is the lifecycle, in order.
      let highest = 0;
      const kept: string[] = [];
      for (const event of events) {
        if (event.sequence <= highest) continue;
        highest = event.sequence;
        kept.push(event.state);
      }
      expect(kept).toEqual([...PATHS[kind]]);
    }
  });
});

/** A queue subscribed to the runtime's bus for the tenant's events; reads what came so far. */
async function subscribe(prefix: string, tenant: string) {
  const sqs = new SQSClient({});
  const events = new EventBridgeClient({});
  const { EventBuses = [] } = await events.send(new ListEventBusesCommand({ NamePrefix: prefix }));
  const bus = EventBuses[0]?.Name;
  if (!bus) throw new Error(`no event bus named ${prefix}...`);
  const name = `sub-${randomUUID().slice(0, 8)}`;
  const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const pattern = { source: ['lethe'], detail: { tenant: [tenant] } };
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
  const heard: Heard[] = [];
  return async () => {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length === 0) return heard;
      for (const message of Messages) {
        const { detail } = JSON.parse(message.Body ?? '{}') as { detail: Heard };
        heard.push({
          deletionId: detail.deletionId,
          state: detail.state,
          sequence: detail.sequence,
        });
      }
    }
  };
}
