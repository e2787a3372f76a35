import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCell, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { aDeletion, aStream } from '../helpers/records.ts';
import { listAll } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

const RUNS = Number(process.env.LETHE_RACE_RUNS ?? 8);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Invariant 9: cancel and the start of a scheduled deletion race only through condition
 * expressions. Exactly one wins, and a cancelled deletion deletes nothing.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('cancel racing the start', () => {
  let target: TestTarget;
  let api: ApiClient;

  beforeAll(async () => {
    // A sweep every 200 ms: the start follows executeAfter closely, so cancels land around it.
    target = await startTarget({ sweepIntervalSeconds: 0.2 });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('lets exactly one of begin and cancel win, whatever their order (stores, many runs)', async () => {
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const stores = storesOf(local);
    await fc.assert(
      fc.asyncProperty(fc.nat(6), fc.nat(6), async (beginDelay, cancelDelay) => {
        // Prepare: a SCHEDULED deletion, its stream DELETING by it.
        const tenant = `r${randomUUID().slice(0, 8)}`;
        const deletion = aDeletion({
          tenant,
          deletionId: randomUUID(),
          state: 'SCHEDULED',
          bucket: local.resources.bucket,
          prefix: `streams/${tenant}/logs/1/`,
          // Not due: the sweeper stays out of this race.
          executeAfter: new Date(Date.now() + 3_600_000).toISOString(),
        });
        await stores.table.putAll([
          {
            pk: `TENANT#${tenant}`,
            sk: 'STREAM#logs',
            ...aStream({
              tenant,
              state: 'DELETING',
              deletionId: deletion.deletionId,
              bucket: local.resources.bucket,
            }),
          },
        ]);
        await stores.putDeletion(deletion);

        // Act
        const [begun, cancelled] = await Promise.all([
          sleep(beginDelay).then(() => stores.deletions.begin(deletion)),
          sleep(cancelDelay).then(() =>
            stores.deletions.cancel(tenant, deletion.deletionId).then(
              () => true,
              (error: { code?: string }) => {
                if (error.code !== 'DeletionNotCancellable') throw error;
                return false;
              },
            ),
          ),
        ]);

        // Assess: one winner, and the records agree with it.
        expect(Number(begun.status === 'ok') + Number(cancelled)).toBe(1);
        const stored = await stores.deletions.get(tenant, deletion.deletionId);
        const stream = await stores.streams.find(tenant, 'logs');
        if (cancelled) {
          expect(stored?.state).toBe('CANCELLED');
          expect(stream).toMatchObject({ state: 'ACTIVE', generation: 1 });
        } else {
          // Begun, it is the stack's pipeline's from here: it may have started, even finished.
          expect(['PENDING', 'RUNNING', 'COMPLETED']).toContain(stored?.state);
          expect(stream?.state).not.toBe('ACTIVE');
          expect(stream).toMatchObject({ deletionId: deletion.deletionId });
        }
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('a cancel fired around executeAfter either keeps every object or loses to a completed deletion', async () => {
    const answered = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 600, max: 1600 }), async (cancelAfterMs) => {
        // Prepare
        const cell = await prepareCell(api, target.s3, `c${randomUUID().slice(0, 8)}`, 6);
        const requested = await api.delete(cell.tenant, 'logs', '?graceSeconds=1');
        const id = String(requested.body.deletionId);

        // Act
        await sleep(cancelAfterMs);
        const cancel = await api.cancel(cell.tenant, id);
        answered.add(cancel.status);

        // Assess
        const left = async () =>
          (await listAll(target.s3, cell.location.bucket, cell.location.prefix)).size;
        if (cancel.status === 200) {
          expect(cancel.body.state).toBe('CANCELLED');
          // Nothing deletes it later either: give the pipeline time to misbehave.
          await sleep(1500);
          expect((await api.deletion(cell.tenant, id)).body.state).toBe('CANCELLED');
          expect(await left()).toBe(cell.objects);
          expect((await api.get(cell.tenant, 'logs')).body.state).toBe('ACTIVE');
        } else {
          expect(cancel).toMatchObject({
            status: 409,
            body: { error: { code: 'DeletionNotCancellable' } },
          });
          const receipt = await waitForEnd(api, cell.tenant, id);
          expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: cell.objects });
          expect(await left()).toBe(0);
        }
      }),
      // Well inside the window, and well after it (the sweeper starts it within a second):
      // both sides of the race are run, whatever else is drawn.
      { numRuns: RUNS, examples: [[300], [4000]] },
    );
    expect([...answered].sort()).toEqual([200, 409]);
  });
});
