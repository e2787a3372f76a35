import { randomUUID } from 'node:crypto';
import {
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  PutBucketVersioningCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanView } from '../../lib/core/index.ts';
import type { Clients } from '../../lib/support/index.ts';
import { prepareCell, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/** S3 commands that change data: a plan must never send one. */
const MUTATING = /^(Delete|Put|Copy|Abort|Complete|Create|Restore|Upload)/;

/**
 * Every S3 request of the pipeline's functions goes through this guard: a mutating command is
 * refused (and remembered) while `armed`, so a plan that tried to change anything would fail.
 */
function mutationGuard() {
  const refused: string[] = [];
  const guard = {
    armed: false,
    refused,
    seen: 0,
    failedSends: 0,
    /** Tenants whose plan pages are lost once sent, as if each failed every delivery. */
    losing: new Set<string>(),
    lost: 0,
    /** Listings of a prefix that fail, as S3 out of reach would, before they work again. */
    failing: new Map<string, number>(),
  };
  const wrap = (clients: Clients): Clients => {
    for (const s3 of [clients.s3, clients.s3Deletes])
      s3.middlewareStack.add(
        (next, context) => async (args) => {
          const command = context.commandName?.replace(/Command$/, '') ?? '';
          const prefix = (args.input as { Prefix?: string }).Prefix ?? '';
          const failures = guard.failing.get(prefix) ?? 0;
          if (failures > 0) {
            guard.failing.set(prefix, failures - 1);
            throw new Error(`injected: S3 out of reach (${command})`);
          }
          if (guard.armed) guard.seen++;
          if (guard.armed && MUTATING.test(command)) {
            refused.push(command);
            throw new Error(`refused ${command}: nothing may change during a plan`);
          }
          return next(args);
        },
        { step: 'initialize', name: 'refuseMutations' },
      );
    // Every other plan page message fails to send once: the page is counted, the worker
    // fails, and the redelivered message must hand the next page on without counting again.
    let sends = 0;
    clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as SendMessageBatchCommandInput;
        if (
          context.commandName === 'SendMessageBatchCommand' &&
          /plans-pages/.test(input.QueueUrl ?? '')
        ) {
          const entries = input.Entries ?? [];
          const kept = entries.filter(
            (entry) => !guard.losing.has(JSON.parse(entry.MessageBody ?? '{}').tenant),
          );
          guard.lost += entries.length - kept.length;
          if (kept.length < entries.length) {
            // Answered as sent: nothing tells the sender the pages will never be delivered.
            if (kept.length === 0) return { output: { Failed: [], $metadata: {} }, response: {} };
            args.input = { ...input, Entries: kept };
          }
          if (++sends % 2 === 0) {
            guard.failedSends++;
            throw new Error('injected: the worker died before it sent');
          }
        }
        return next(args);
      },
      { step: 'initialize', name: 'dropPlanSends' },
    );
    return clients;
  };
  return { guard, wrap };
}

const plan = async (api: ApiClient, tenant: string, stream = 'logs') => {
  const reply = await api.call<PlanView>('POST', `/v1/tenants/${tenant}/streams/${stream}/plans`);
  expect(reply.status).toBe(202);
  expect(reply.headers.get('location')).toBe(`/v1/tenants/${tenant}/plans/${reply.body.planId}`);
  return waitFor(
    `plan ${reply.body.planId}`,
    async () => {
      const { body } = await api.call<PlanView>(
        'GET',
        `/v1/tenants/${tenant}/plans/${reply.body.planId}`,
      );
      return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
    },
    120_000,
    300,
  );
};

const uploadsUnder = async (s3: S3Client, bucket: string, prefix: string) =>
  (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ??
  [];

describe('plans (dry runs)', () => {
  let target: TestTarget;
  let api: ApiClient;
  const { guard, wrap } = mutationGuard();
  const tenant = () => `p${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // Pages of 7: every chain is several pages long, and every other send fails once.
    target = await startTarget({ settings: { LETHE_PAGE_SIZE: '7' }, wrapClients: wrap });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('counts exactly, over many pages and partitions, and changes nothing', async () => {
    // Arrange: 60 objects over three partitions, an ingested batch, two keys directly under
    // the location, and an upload in progress.
    const cell = await prepareCell(api, target.s3, tenant(), 60);
    const { bucket, prefix } = cell.location;
    await seedObjects(target.s3, bucket, [
      { key: `${prefix}manifest.json`, body: '{"v":1}' },
      { key: `${prefix}_SUCCESS`, body: '' },
    ]);
    await target.s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}dt=2026-01-01/big.bin` }),
    );
    const before = await listAll(target.s3, bucket, prefix);
    const stream = (await api.get(cell.tenant, 'logs')).body;

    // Act
    guard.armed = true;
    const result = await plan(api, cell.tenant);
    guard.armed = false;

    // Assess: exact counts, and nothing changed
    const bytes = [...before.values()].reduce((sum, size) => sum + size, 0);
    expect(result).toMatchObject({
      state: 'COMPLETED',
      generation: 1,
      location: `s3://${bucket}/${prefix}`,
      objects: before.size,
      versions: before.size,
      bytes,
      deleteMarkers: 0,
      multipartUploads: 1,
    });
    expect(result.estimate.s3Requests).toBeGreaterThan(2 * Math.ceil(before.size / 7));
    expect(result.estimate.costUsd).toBeGreaterThan(0);
    expect(result.estimate.seconds).toBeGreaterThanOrEqual(1);
    expect(guard.refused).toEqual([]);
    // The guard stood on the plan's path, and sends failed after pages were counted.
    expect(guard.seen).toBeGreaterThan(Math.ceil(before.size / 7));
    expect(guard.failedSends).toBeGreaterThan(0);
    expect(await listAll(target.s3, bucket, prefix)).toEqual(before);
    expect(await uploadsUnder(target.s3, bucket, prefix)).toHaveLength(1);
    expect((await api.get(cell.tenant, 'logs')).body).toEqual(stream);
  });

  it("counts what the deletion takes: the location's own key and an upload at it too", async () => {
    // Arrange: a console "folder" object and an upload whose key is the location itself,
    // beside partitions of several pages and keys directly under the location
    const name = tenant();
    const created = await api.create(name, 'logs');
    const { bucket, prefix } = parseLocation(String(created.body.location));
    const keys = [
      prefix,
      `${prefix}manifest.json`,
      ...Array.from({ length: 12 }, (_, n) => `${prefix}dt=2026-01-0${1 + (n % 2)}/k${n}.json`),
    ];
    const bytes = await seedObjects(
      target.s3,
      bucket,
      keys.map((key, n) => ({ key, body: key === prefix ? '' : 'x'.repeat(n) })),
    );
    for (const key of [prefix, `${prefix}dt=2026-01-01/big.bin`]) {
      await target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    }

    // Act: the plan, then the deletion it previews
    guard.armed = true;
    const previewed = await plan(api, name);
    guard.armed = false;
    const deletion = await api.delete(name, 'logs');
    const receipt = await waitForEnd(api, name, String(deletion.body.deletionId));

    // Assess: the plan's counts are the receipt's, and both are everything there was
    expect(guard.refused).toEqual([]);
    expect(receipt).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: keys.length,
      bytesDeleted: bytes,
      multipartUploadsAborted: 2,
    });
    expect(previewed).toMatchObject({
      state: 'COMPLETED',
      objects: receipt.objectsDeleted,
      versions: receipt.objectsDeleted,
      bytes: receipt.bytesDeleted,
      multipartUploads: receipt.multipartUploadsAborted,
    });
  });

  it('completes, exactly, a plan whose pages were lost: the sweeper takes it on again', async () => {
    // Arrange: every page the plan sends is lost until the sweeper has had it stalled once
    const cell = await prepareCell(api, target.s3, tenant(), 30);
    const { bucket, prefix } = cell.location;
    const before = await listAll(target.s3, bucket, prefix);
    guard.losing.add(cell.tenant);
    const lostBefore = guard.lost;

    // Act
    const reply = await api.call<PlanView>('POST', `/v1/tenants/${cell.tenant}/streams/logs/plans`);
    const path = `/v1/tenants/${cell.tenant}/plans/${reply.body.planId}`;
    await waitFor('a lost page', async () => guard.lost > lostBefore || undefined, 30_000, 100);
    // Stopped: no page is delivered, so it stays RUNNING with nothing counted.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const stopped = (await api.call<PlanView>('GET', path)).body;
    guard.losing.delete(cell.tenant);
    const ended = await waitFor(
      'the plan taken on again',
      async () => {
        const { body } = await api.call<PlanView>('GET', path);
        return body.state === 'RUNNING' ? undefined : body;
      },
      60_000,
      300,
    );

    // Assess
    expect(stopped).toMatchObject({ state: 'RUNNING', objects: 0 });
    expect(ended).toMatchObject({
      state: 'COMPLETED',
      objects: before.size,
      versions: before.size,
    });
  });

  it('starts again a plan whose start failed every delivery: the sweeper takes it on', async () => {
    // Arrange: the start's listing fails as often as its stream record is delivered (the
    // first time and 5 retries), so the record is given up to the dispatch-failures queue
    const cell = await prepareCell(api, target.s3, tenant(), 10);
    const { bucket, prefix } = cell.location;
    const before = await listAll(target.s3, bucket, prefix);
    guard.failing.set(prefix, 6);

    // Act
    const result = await plan(api, cell.tenant);

    // Assess
    expect(guard.failing.get(prefix)).toBe(0);
    expect(result).toMatchObject({ state: 'COMPLETED', objects: before.size });
  });

  it('refuses a stream being deleted, and a deletion right after a plan still takes everything', async () => {
    // Arrange
    const cell = await prepareCell(api, target.s3, tenant(), 20);

    // Act: a plan, then the deletion at once (racing the plan), then another plan
    const planned = api.call<PlanView>('POST', `/v1/tenants/${cell.tenant}/streams/logs/plans`);
    const deletion = await api.delete(cell.tenant, 'logs');
    const refused = await api.call('POST', `/v1/tenants/${cell.tenant}/streams/logs/plans`);
    const receipt = await waitForEnd(api, cell.tenant, String(deletion.body.deletionId));

    // Assess
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'StreamDeleting' } });
    expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: cell.objects });
    const first = await planned;
    if (first.status === 202) {
      const ended = await waitFor('the racing plan to end', async () => {
        const { body } = await api.call<PlanView>(
          'GET',
          `/v1/tenants/${cell.tenant}/plans/${first.body.planId}`,
        );
        return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
      });
      // A plan is exact as of its listing: never more than there was.
      expect(ended.objects).toBeLessThanOrEqual(cell.objects);
    } else {
      expect(first.status).toBe(409);
    }
  });

  it('answers 404 for a plan of another tenant, and for a stream that does not exist', async () => {
    const cell = await prepareCell(api, target.s3, tenant(), 3);
    const result = await plan(api, cell.tenant);

    const other = await api.call('GET', `/v1/tenants/x${cell.tenant}/plans/${result.planId}`);
    const missing = await api.call('POST', `/v1/tenants/${cell.tenant}/streams/nope/plans`);

    expect(other).toMatchObject({ status: 404, body: { error: { code: 'PlanNotFound' } } });
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'StreamNotFound' } } });
  });

  it('counts versions, delete markers and current objects in a versioned bucket', async () => {
    // Arrange: a stack of its own whose bucket keeps versions
    const own = await startTarget({ settings: { LETHE_PAGE_SIZE: '10' }, wrapClients: wrap });
    try {
      const ownApi = apiClient(own.baseUrl);
      const name = tenant();
      const created = await ownApi.create(name, 'logs');
      const { bucket, prefix } = parseLocation(String(created.body.location));
      await own.s3.send(
        new PutBucketVersioningCommand({
          Bucket: bucket,
          VersioningConfiguration: { Status: 'Enabled' },
        }),
      );
      const keys = Array.from({ length: 40 }, (_, n) => `${prefix}dt=2026-01-0${n % 4}/k${n}.json`);
      await seedObjects(
        own.s3,
        bucket,
        keys.map((key) => ({ key, body: 'first' })),
      );
      await seedObjects(
        own.s3,
        bucket,
        keys.slice(0, 20).map((key) => ({ key, body: 'second!' })),
      );
      for (const key of keys.slice(0, 8)) {
        await own.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      }
      await own.s3.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}u.bin` }),
      );

      // Act
      guard.armed = true;
      const result = await plan(ownApi, name);
      guard.armed = false;

      // Assess
      expect(result).toMatchObject({
        state: 'COMPLETED',
        objects: 32,
        versions: 60,
        bytes: 40 * 5 + 20 * 7,
        deleteMarkers: 8,
        multipartUploads: 1,
      });
      expect(guard.refused).toEqual([]);
    } finally {
      guard.armed = false;
      await own.stop();
    }
  });
});

describe.skipIf(process.env.LETHE_TEST_API_URL)('a plan S3 refuses', () => {
  it("ends FAILED with S3's code when the stream's bucket is gone", async () => {
    // Arrange: a stack of its own, whose bucket is removed under an ACTIVE stream
    const own = await startTarget();
    try {
      const api = apiClient(own.baseUrl);
      const name = `g${randomUUID().slice(0, 8)}`;
      const created = await api.create(name, 'logs');
      const { bucket } = parseLocation(String(created.body.location));
      await own.s3.send(new DeleteBucketCommand({ Bucket: bucket }));

      // Act
      const ended = await plan(api, name);

      // Assess
      expect(ended).toMatchObject({
        state: 'FAILED',
        failure: { code: 'NoSuchBucket', message: expect.stringContaining(`s3://${bucket}/`) },
      });
    } finally {
      await own.stop();
    }
  });
});
