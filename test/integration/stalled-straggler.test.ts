import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageMessage } from '../../lib/core/index.ts';
import { Finalizer, PageWorker, unobserved } from '../../lib/pipeline/index.ts';
import { PageDeleter } from '../../lib/s3/index.ts';
import { FailureStore, UploadStore } from '../../lib/store/index.ts';
import { aDeletion } from '../helpers/records.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * A straggler of the attempts a Stalled verdict gave up: a worker whose fence still says its
 * round runs (it learned so within an interval, before the verdict), taking a page message of
 * that round after the deletion was retried. Were it to list and count, it would count keys
 * the retry's round lists too.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('a straggler of a Stalled attempt', () => {
  let target: TestTarget;
  let stores: ReturnType<typeof storesOf>;
  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
    // The table, queue and bucket without the pipeline: this test plays its parts.
    await target.stop();
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('lists, deletes and counts nothing once the verdict stopped its chain, whatever its fence says', async () => {
    // Prepare: a running deletion of 10 objects, its one chain not started.
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const deletion = aDeletion({
      tenant,
      deletionId: randomUUID(),
      state: 'RUNNING',
      bucket: local.resources.bucket,
      prefix: `streams/${tenant}/logs/1/`,
      chainsTotal: 1,
      chainsSettled: 0,
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    await stores.table.putAll([
      { pk: `TENANT#${tenant}`, sk: 'STREAM#logs', state: 'DELETING', tenant, stream: 'logs' },
    ]);
    await stores.putDeletion(deletion);
    const chainId = 'a'.repeat(20);
    await stores.putChains(deletion, [{ chainId, prefix: deletion.prefix }]);
    await seedObjects(target.s3, deletion.bucket, partitionedObjects(deletion.prefix, 10, 1));
    const s3 = local.clients.s3;
    const sent: unknown[] = [];
    const queue = { send: async (messages: unknown[]) => void sent.push(...messages) };
    const finalizer = new Finalizer({
      deletions: stores.deletions,
      chains: stores.chains,
      streams: stores.streams,
      uploads: new UploadStore({ table: stores.table }),
      s3,
      queue,
      events: unobserved,
      ingestGraceSeconds: 0,
      clock: { now: () => new Date() },
    });
    const straggler = new PageWorker({
      chains: stores.chains,
      deletions: stores.deletions,
      failures: new FailureStore({ table: stores.table }),
      fence: { isRunning: async () => true },
      s3,
      deleter: new PageDeleter({ client: s3 }),
      queue,
      finalizer,
      pageSize: 20,
    });

    // Act: the Stalled verdict, a retry at once, then the straggler's message of round 1.
    const claim = await stores.deletions.claimStale(deletion, false);
    if (claim.status !== 'ok') throw new Error('not claimed');
    const verdict = await finalizer.fail(claim.item, { code: 'Stalled', message: 'test' });
    await stores.deletions.retry(tenant, deletion.deletionId);
    const chain = await stores.chains.get(deletion, chainId);
    if (!chain) throw new Error('no chain');
    const outcome = await straggler.handle(pageMessage(chain, 0));

    // Assess: every object is left to the retry's round, which counts each once.
    expect(verdict).toBe('failed');
    expect(outcome).toEqual({ outcome: 'stale' });
    expect((await listAll(target.s3, deletion.bucket, deletion.prefix)).size).toBe(10);
    expect(await stores.chains.get(deletion, chainId)).toMatchObject({
      lastPage: -1,
      objectsDeleted: 0,
    });
  });
});
