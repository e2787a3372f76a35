import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clockOf, type DeletionRecord } from '../../../lib/core/index.ts';
import { Finalizer } from '../../../lib/pipeline/index.ts';
import { UploadStore } from '../../../lib/store/index.ts';
import { aDeletion, aStream } from '../../helpers/records.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

type Stores = ReturnType<typeof storesOf>;
const MAX_ROUNDS = 3;

/**
 * A retried deletion's rounds, against the emulator's DynamoDB and S3: the retry remembers the
 * round it left off at, and verification counts the rounds before LocationNotEmpty from there.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('a retried deletion gets its rounds afresh', () => {
  let target: TestTarget;
  let stores: Stores;
  let finalizer: Finalizer;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    const local = target.local;
    stores = storesOf(local);
    finalizer = new Finalizer({
      deletions: stores.deletions,
      chains: stores.chains,
      streams: stores.streams,
      uploads: new UploadStore({ table: stores.table }),
      s3: local.clients.s3,
      queue: { send: vi.fn(async () => {}) },
      events: { ended: vi.fn(), resumed: vi.fn() },
      ingestGraceSeconds: 0,
      maxRounds: MAX_ROUNDS,
      clock: clockOf(() => new Date()),
    });
    // The stores without the pipeline: no dispatcher starts the retried round under the test.
    await target.stop();
  });

  afterAll(async () => {
    await target?.stop();
  });

  /** A stream deletion FAILED in `round`, its stream DELETING by it, a key left in its location. */
  async function failedIn(round: number): Promise<DeletionRecord> {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const bucket = target.local?.resources.bucket ?? '';
    const deletion = aDeletion({
      tenant,
      deletionId: randomUUID(),
      state: 'FAILED',
      round,
      bucket,
      prefix: `streams/${tenant}/logs/1/`,
      ingestsSettled: true,
      reason: { code: 'LocationNotEmpty', message: 'objects kept appearing' },
    });
    await stores.table.putAll([
      {
        pk: `TENANT#${tenant}`,
        sk: 'STREAM#logs',
        ...aStream({ tenant, state: 'DELETING', deletionId: deletion.deletionId }),
      },
    ]);
    await target.local?.clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: `${deletion.prefix}late.json`, Body: '[]' }),
    );
    return stores.putDeletion(deletion);
  }

  /** Starts the deletion's current round with no chains and verifies it. */
  async function runRound(deletion: DeletionRecord) {
    const started = await stores.deletions.start(deletion, 0, false);
    if (started.status !== 'ok') throw new Error(`round ${deletion.round} did not start`);
    const running = await stores.deletions.get(deletion.tenant, deletion.deletionId);
    if (!running) throw new Error('the deletion is gone');
    return finalizer.finalize(running);
  }

  it('remembers the round a retry left off at, retry after retry', async () => {
    const deletion = await failedIn(MAX_ROUNDS);

    const first = await stores.deletions.retry(deletion.tenant, deletion.deletionId);
    await stores.deletions.fail(first);
    const second = await stores.deletions.retry(deletion.tenant, deletion.deletionId);

    expect(first).toMatchObject({ state: 'PENDING', round: MAX_ROUNDS + 1 });
    expect(first.retriedAtRound).toBe(MAX_ROUNDS);
    // Open since the retry, for the age alarm: written with the retry's own time.
    expect(first.retriedAt).toBe(first.updatedAt);
    expect(second.retriedAt).toBe(second.updatedAt);
    expect(second).toMatchObject({ state: 'PENDING', round: MAX_ROUNDS + 2 });
    expect(second.retriedAtRound).toBe(MAX_ROUNDS + 1);
  });

  it('starts another round, not LocationNotEmpty, when the first round after a retry finds keys left', async () => {
    const deletion = await failedIn(MAX_ROUNDS);
    const retried = await stores.deletions.retry(deletion.tenant, deletion.deletionId);

    const outcome = await runRound(retried);

    expect(outcome).toBe('next-round');
    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      state: 'PENDING',
      round: MAX_ROUNDS + 2,
    });
  });

  it('fails with LocationNotEmpty once the retry has had as many rounds as a request', async () => {
    const deletion = await failedIn(MAX_ROUNDS);
    let current = await stores.deletions.retry(deletion.tenant, deletion.deletionId);

    const outcomes: string[] = [];
    for (let run = 0; run < MAX_ROUNDS; run++) {
      outcomes.push(await runRound(current));
      const next = await stores.deletions.get(deletion.tenant, deletion.deletionId);
      if (!next) throw new Error('the deletion is gone');
      current = next;
    }

    expect(outcomes).toEqual([...Array(MAX_ROUNDS - 1).fill('next-round'), 'failed']);
    expect(current).toMatchObject({
      state: 'FAILED',
      round: 2 * MAX_ROUNDS,
      reason: { code: 'LocationNotEmpty' },
    });
  });
});
