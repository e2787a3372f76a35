import { randomUUID } from 'node:crypto';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OffboardingView } from '../../lib/core/index.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Offboarding a whole tenant, end to end: every stream gets a deletion (over more than one
 * fan-out step), creating a stream under it is refused until it ends, another tenant is
 * untouched, it can be taken back within its grace window, and its changes reach the bus.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('tenant offboarding', () => {
  let target: TestTarget;
  let api: ApiClient;
  const tenant = () => `o${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // Fan-out steps of 10 streams: every offboarding here takes several.
    target = await startTarget({ settings: { LETHE_OFFBOARDING_PAGE_SIZE: '10' } });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const offboarding = async (name: string) =>
    (await api.call<OffboardingView>('GET', `/v1/tenants/${name}/offboarding`)).body;

  /** The offboarding, once it is COMPLETED. */
  const completed = (name: string, timeoutMs?: number, intervalMs?: number) =>
    waitFor(
      'the offboarding to complete',
      async () => {
        const view = await offboarding(name);
        return view.state === 'COMPLETED' ? view : undefined;
      },
      timeoutMs,
      intervalMs,
    );

  /**
   * `logs` (6 objects) and `empty`, offboarded with an hour's window and both taken in: the
   * offboarding's view then, where `logs` lies, and the id of the deletion that took it in.
   */
  async function offboardedInWindow(name: string) {
    const { body } = await api.create(name, 'logs');
    const where = parseLocation(String(body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 6, 2));
    await api.create(name, 'empty');
    await api.call('DELETE', `/v1/tenants/${name}?graceSeconds=3600`);
    const taken = await waitFor('both streams taken in', async () => {
      const view = await offboarding(name);
      return view.streams === 2 ? view : undefined;
    });
    const logs = String((await api.get(name, 'logs')).body.deletionId);
    return { where, taken, logs };
  }

  /** A queue subscribed to the bus for offboarding changes. */
  async function subscribe(name: string) {
    const sqs = new SQSClient({});
    const events = new EventBridgeClient({});
    const bus = target.local?.resources.buses[0] ?? '';
    const rule = `off-${randomUUID().slice(0, 8)}`;
    const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: rule }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    const pattern = {
      'detail-type': ['Tenant Offboarding State Change'],
      detail: { tenant: [name] },
    };
    await events.send(
      new PutRuleCommand({ Name: rule, EventBusName: bus, EventPattern: JSON.stringify(pattern) }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: rule,
        EventBusName: bus,
        Targets: [{ Id: 'queue', Arn: Attributes?.QueueArn ?? '' }],
      }),
    );
    const details: Array<Record<string, unknown>> = [];
    const drain = async () => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const message of Messages) {
        details.push(
          (JSON.parse(message.Body ?? '{}') as { detail: Record<string, unknown> }).detail,
        );
      }
      return details;
    };
    const received = async () => (await drain()).map((detail) => String(detail.state));
    return Object.assign(received, { details: drain });
  }

  /** The states announced once `last` has been, and what a further second of waiting brought. */
  async function announcedUntil(received: Awaited<ReturnType<typeof subscribe>>, last: string) {
    await waitFor(`${last} on the bus`, async () =>
      (await received()).includes(last) ? true : undefined,
    );
    return received.details();
  }

  it('deletes every stream of the tenant, refuses new ones meanwhile, and frees the names', async () => {
    // Arrange: 25 streams (three fan-out steps): two with data, one already scheduled for
    // deletion, the rest empty; and another tenant's stream with data.
    const name = tenant();
    const other = tenant();
    const received = await subscribe(name);
    const seeded = new Map<string, number>();
    for (const stream of ['a-data', 'b-data']) {
      const { body } = await api.create(name, stream);
      const where = parseLocation(String(body.location));
      await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 20, 2));
      seeded.set(stream, 20);
    }
    await api.create(name, 'c-scheduled');
    const scheduled = await api.delete(name, 'c-scheduled', '?graceSeconds=3600');
    for (let n = 0; n < 22; n++) await api.create(name, `empty-${String(n).padStart(3, '0')}`);
    const kept = await api.create(other, 'logs');
    const keptAt = parseLocation(String(kept.body.location));
    await seedObjects(target.s3, keptAt.bucket, partitionedObjects(keptAt.prefix, 10, 1));

    // Act
    const reply = await api.call<OffboardingView>('DELETE', `/v1/tenants/${name}`);
    const refused = await api.create(name, 'late');
    const repeat = await api.call<OffboardingView>('DELETE', `/v1/tenants/${name}`);
    // The stream scheduled before was taken in as it was; start it now.
    await waitFor('the fan-out to take every stream in', async () =>
      (await offboarding(name)).streams === 25 ? true : undefined,
    );
    expect((await api.expedite(name, String(scheduled.body.deletionId))).status).toBe(202);
    const done = await completed(name, 180_000, 500);

    // Assess
    expect(reply.status).toBe(202);
    expect(reply.headers.get('location')).toBe(`/v1/tenants/${name}/offboarding`);
    expect(repeat.body.offboardingId).toBe(reply.body.offboardingId);
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'TenantDeleting' } } });
    expect(done).toMatchObject({
      streams: 25,
      deletionStates: { COMPLETED: 25 },
      objectsDeleted: 40,
    });
    expect(done.deletions).toHaveLength(25);
    expect(done.deletions).toContain(scheduled.body.deletionId);
    expect((await api.list(name)).body.streams).toEqual([]);
    expect((await listAll(target.s3, keptAt.bucket, keptAt.prefix)).size).toBe(10);
    expect((await api.create(name, 'a-data')).body).toMatchObject({ generation: 2 });
    await waitFor('RUNNING and COMPLETED on the bus', async () => {
      const states = await received();
      return states.includes('COMPLETED') ? states : undefined;
    });
    expect(await received()).toEqual(['RUNNING', 'COMPLETED']);
  });

  it('takes an offboarding back within its grace window: every object is still there', async () => {
    // Arrange
    const name = tenant();
    const received = await subscribe(name);
    const { body } = await api.create(name, 'logs');
    const where = parseLocation(String(body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 12, 2));
    await api.create(name, 'empty');
    await api.call('DELETE', `/v1/tenants/${name}?graceSeconds=3600`);
    await waitFor('both streams taken in', async () =>
      (await offboarding(name)).streams === 2 ? true : undefined,
    );
    expect((await offboarding(name)).state).toBe('SCHEDULED');

    // Act
    const cancelled = await api.call<OffboardingView>(
      'POST',
      `/v1/tenants/${name}/offboarding/cancel`,
    );
    const again = await api.call('POST', `/v1/tenants/${name}/offboarding/cancel`);

    // Assess
    expect(cancelled).toMatchObject({
      status: 200,
      body: { state: 'CANCELLED', deletionStates: { CANCELLED: 2 } },
    });
    expect(again).toMatchObject({
      status: 409,
      body: { error: { code: 'OffboardingNotCancellable' } },
    });
    expect((await api.get(name, 'logs')).body).toMatchObject({ state: 'ACTIVE', generation: 1 });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(12);
    expect((await api.create(name, 'new')).status).toBe(201);
    const events = await announcedUntil(received, 'CANCELLED');
    expect(events.map((detail) => detail.state)).toEqual(['SCHEDULED', 'CANCELLED']);
    expect(events[1]).toMatchObject({ cancelledAt: cancelled.body.cancelledAt });
  });

  it('announces SCHEDULED while its window lasts, RUNNING after it, then COMPLETED: once each, shaped as the API answers it', async () => {
    // Arrange: two streams, one with data
    const name = tenant();
    const received = await subscribe(name);
    const { body } = await api.create(name, 'logs');
    const where = parseLocation(String(body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 5, 1));
    await api.create(name, 'empty');

    // Act: a window of three seconds; the sweeps (every second) begin its deletions after it
    const reply = await api.call<OffboardingView>('DELETE', `/v1/tenants/${name}?graceSeconds=3`);
    const done = await completed(name);
    const events = await announcedUntil(received, 'COMPLETED');

    // Assess
    expect(reply.body.state).toBe('SCHEDULED');
    expect(events.map((detail) => detail.state)).toEqual(['SCHEDULED', 'RUNNING', 'COMPLETED']);
    const { deletions: _ids, deletionStates: _states, ...summary } = done;
    // Each with its place among the offboarding's writes: growing, and the time of the change.
    const { sequence, changedAt, ...last } = events[2] ?? {};
    expect(last).toEqual(summary);
    expect(changedAt).toBe(done.completedAt);
    const sequences = events.map((event) => Number(event.sequence));
    expect(sequences[0]).toBe(1);
    expect(sequences[1]).toBeGreaterThan(sequences[0] ?? 0);
    expect(Number(sequence)).toBeGreaterThan(sequences[1] ?? 0);
    expect(events[1]).toMatchObject({ offboardingId: done.offboardingId, streams: 2 });
    // Before it ends, what its item alone says: no table keys, no deletion ids or states.
    const fromItem = [
      'changedAt',
      'executeAfter',
      'offboardingId',
      'requestedAt',
      'sequence',
      'state',
      'streams',
      'tenant',
    ];
    expect(Object.keys(events[0] ?? {}).sort()).toEqual(fromItem);
    expect(Object.keys(events[1] ?? {}).sort()).toEqual(fromItem);
  });

  it('leaves a deletion the tenant requested before the offboarding to its own schedule when the offboarding is taken back', async () => {
    // Arrange: the tenant's own deletion of doomed, in an hour; then an offboarding
    const name = tenant();
    const where = parseLocation(String((await api.create(name, 'doomed')).body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 4, 1));
    await api.create(name, 'other');
    const own = await api.delete(name, 'doomed', '?graceSeconds=3600');
    const ownId = String(own.body.deletionId);
    const asked = (await api.deletion(name, ownId)).body;
    await api.call('DELETE', `/v1/tenants/${name}?graceSeconds=3600`);
    await waitFor('both streams taken in', async () =>
      (await offboarding(name)).streams === 2 ? true : undefined,
    );

    // Act: the offboarding is taken back, and a sweep finishes its cancel
    const cancelled = await api.call<OffboardingView>(
      'POST',
      `/v1/tenants/${name}/offboarding/cancel`,
    );
    await target.local?.invoke('functions/sweeper.ts');

    // Assess: the tenant's own deletion still waits out its hour; the offboarding's is cancelled
    expect(own.status).toBe(202);
    expect(cancelled).toMatchObject({
      status: 200,
      body: { state: 'CANCELLED', streams: 2, deletionStates: { SCHEDULED: 1, CANCELLED: 1 } },
    });
    expect(cancelled.body.deletions).toContain(ownId);
    expect((await api.deletion(name, ownId)).body).toMatchObject({
      state: 'SCHEDULED',
      executeAfter: asked.executeAfter,
    });
    expect((await api.get(name, 'doomed')).body).toMatchObject({
      state: 'DELETING',
      deletionId: ownId,
    });
    expect((await api.get(name, 'other')).body).toMatchObject({ state: 'ACTIVE' });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(4);
  });

  it("takes a stream in again when its deletion is cancelled under the offboarding (a cancelled offboarding's late clean-up), and completes", async () => {
    // Arrange: an offboarding in its window, both streams taken in
    const name = tenant();
    const { where, taken, logs } = await offboardedInWindow(name);

    // Act: the deletion of logs is cancelled under the running offboarding
    expect((await api.cancel(name, logs)).status).toBe(200);
    await target.local?.invoke('functions/sweeper.ts');

    // Assess: logs has a deletion again, the offboarding names it instead
    const retaken = await offboarding(name);
    const again = String((await api.get(name, 'logs')).body.deletionId);
    expect(again).not.toBe(logs);
    expect(retaken.deletions).toContain(again);
    expect(retaken.deletions).not.toContain(logs);
    expect(retaken).toMatchObject({ streams: 2, deletionStates: { SCHEDULED: 2 } });

    // Act + Assess: expedited, every stream's deletion completes and so does the offboarding
    for (const id of retaken.deletions) await api.expedite(name, id);
    const done = await completed(name);
    expect(done).toMatchObject({ objectsDeleted: 6, deletionStates: { COMPLETED: 2 } });
    expect(taken.deletions).not.toContain(again);
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
  });

  it('completes when the tenant cancelled its deletion of a stream, then deleted that stream itself before a sweep', async () => {
    // Arrange: an offboarding in its window, both streams taken in; the tenant cancels the
    // offboarding's deletion of logs, and deletes logs with a deletion of its own, at once
    const name = tenant();
    const { taken, logs } = await offboardedInWindow(name);
    expect((await api.cancel(name, logs)).status).toBe(200);
    const own = String((await api.delete(name, 'logs')).body.deletionId);
    await waitFor('its own deletion to complete', async () =>
      (await api.deletion(name, own)).body.state === 'COMPLETED' ? true : undefined,
    );

    // Act: a sweep, and the other stream's deletion expedited to its end
    await target.local?.invoke('functions/sweeper.ts');
    for (const id of taken.deletions.filter((id) => id !== logs)) await api.expedite(name, id);
    const done = await completed(name, 60_000);

    // Assess: logs counts as done by the deletion that removed it (before: the offboarding
    // waited on the cancelled one for ever, refusing the tenant's creates)
    expect(done).toMatchObject({ streams: 2, objectsDeleted: 6, deletionStates: { COMPLETED: 2 } });
    expect(done.deletions).toContain(own);
    expect(done.deletions).not.toContain(logs);
    expect((await api.create(name, 'logs')).status).toBe(201);
  });

  it('answers 404 for a tenant without streams', async () => {
    const reply = await api.call('DELETE', `/v1/tenants/${tenant()}`);
    expect(reply).toMatchObject({ status: 404, body: { error: { code: 'TenantNotFound' } } });
  });
});

describe.skipIf(process.env.LETHE_TEST_API_URL)('tenant offboarding, between sweeps', () => {
  let target: TestTarget;
  let api: ApiClient;

  beforeAll(async () => {
    // A sweep an hour: only the completions of its deletions can complete the offboarding.
    target = await startTarget({ sweepIntervalSeconds: 3600 });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('completes as its last deletion completes, not at the next sweep', async () => {
    // Arrange: a tenant of three streams, one with data
    const name = `o${randomUUID().slice(0, 8)}`;
    const { body } = await api.create(name, 'data');
    const where = parseLocation(String(body.location));
    await seedObjects(target.s3, where.bucket, partitionedObjects(where.prefix, 12, 3));
    await api.create(name, 'empty-1');
    await api.create(name, 'empty-2');

    // Act
    const reply = await api.call<OffboardingView>('DELETE', `/v1/tenants/${name}`);
    const done = await waitFor(
      'the offboarding to complete',
      async () => {
        const view = (await api.call<OffboardingView>('GET', `/v1/tenants/${name}/offboarding`))
          .body;
        return view.state === 'COMPLETED' ? view : undefined;
      },
      120_000,
      250,
    );

    // Assess
    expect(reply.status).toBe(202);
    expect(done).toMatchObject({
      streams: 3,
      deletionStates: { COMPLETED: 3 },
      objectsDeleted: 12,
    });
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
    for (const deletionId of done.deletions) {
      const receipt = await api.call('GET', `/v1/tenants/${name}/deletions/${deletionId}`);
      expect(receipt.body).toMatchObject({ offboardingId: reply.body.offboardingId });
    }
  });
});

/**
 * A fan-out goes on from each step's own write, and from nothing else: here no sweep takes a
 * fan-out on (its stale interval is an hour), so a step that did not ask for the next one
 * leaves the offboarding RUNNING.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('tenant offboarding, step after step', () => {
  let target: TestTarget;
  let api: ApiClient;

  beforeAll(async () => {
    target = await startTarget({
      settings: { LETHE_OFFBOARDING_PAGE_SIZE: '10', LETHE_STALE_AFTER_SECONDS: '3600' },
    });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('takes 25 streams in over three fan-out steps, each asked for by the step before it', async () => {
    // Arrange
    const name = `o${randomUUID().slice(0, 8)}`;
    for (let n = 0; n < 25; n++) await api.create(name, `s-${String(n).padStart(2, '0')}`);

    // Act
    const reply = await api.call<OffboardingView>('DELETE', `/v1/tenants/${name}`);
    const done = await waitFor(
      'the offboarding to complete',
      async () => {
        const view = (await api.call<OffboardingView>('GET', `/v1/tenants/${name}/offboarding`))
          .body;
        return view.state === 'COMPLETED' ? view : undefined;
      },
      120_000,
      250,
    );

    // Assess
    expect(reply.status).toBe(202);
    expect(done).toMatchObject({ streams: 25, deletionStates: { COMPLETED: 25 } });
  });
});
