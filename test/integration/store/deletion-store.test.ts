import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DELETION_STATES,
  DeletionNotRetryableError,
  type DeletionRecord,
  type DeletionState,
  PartitionDeletionInProgressError,
  StreamNotFoundError,
} from '../../../lib/core/index.ts';
import { itemsOf } from '../../../lib/store/deletion-items.ts';
import {
  DeletionStore,
  FailureStore,
  type ItemKey,
  keys,
  StreamStore,
  TTL_ATTRIBUTE,
  UploadStore,
} from '../../../lib/store/index.ts';
import { aDeletion, aStream } from '../../helpers/records.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

type Stores = ReturnType<typeof storesOf>;
type Result = 'ok' | 'duplicate' | 'fenced';

/**
 * The deletion item's contract: every operation in every state, against the emulator's
 * DynamoDB. The expected outcomes are written out here, not derived from lib/core's lifecycle
 * table, so that a change to the table that changes behaviour fails this test.
 */
const F = 'fenced';
const D = 'duplicate';
const CONTRACT: Record<string, Record<DeletionState, Result>> = {
  begin: { SCHEDULED: 'ok', PENDING: F, RUNNING: F, COMPLETED: F, FAILED: F, CANCELLED: F },
  cancel: { SCHEDULED: 'ok', PENDING: F, RUNNING: F, COMPLETED: F, FAILED: F, CANCELLED: F },
  expedite: { SCHEDULED: 'ok', PENDING: F, RUNNING: F, COMPLETED: F, FAILED: F, CANCELLED: F },
  start: { SCHEDULED: F, PENDING: 'ok', RUNNING: F, COMPLETED: F, FAILED: F, CANCELLED: F },
  nextRound: { SCHEDULED: F, PENDING: F, RUNNING: 'ok', COMPLETED: F, FAILED: F, CANCELLED: F },
  complete: { SCHEDULED: F, PENDING: F, RUNNING: 'ok', COMPLETED: F, FAILED: F, CANCELLED: F },
  fail: { SCHEDULED: F, PENDING: 'ok', RUNNING: 'ok', COMPLETED: F, FAILED: F, CANCELLED: F },
  heartbeat: { SCHEDULED: F, PENDING: F, RUNNING: 'ok', COMPLETED: F, FAILED: F, CANCELLED: F },
  claimVerification: {
    SCHEDULED: D,
    PENDING: D,
    RUNNING: 'ok',
    COMPLETED: D,
    FAILED: D,
    CANCELLED: D,
  },
  claimStale: { SCHEDULED: D, PENDING: 'ok', RUNNING: 'ok', COMPLETED: D, FAILED: D, CANCELLED: D },
  settle: { SCHEDULED: F, PENDING: F, RUNNING: 'ok', COMPLETED: F, FAILED: F, CANCELLED: F },
};

/** An API-facing write's refusal, as the outcome the pipeline-facing ones answer. */
const refusedAs = async (write: Promise<unknown>): Promise<Result> =>
  write.then(
    () => 'ok',
    (error: { code?: string }) => {
      if (error.code === 'DeletionNotCancellable' || error.code === 'DeletionNotScheduled') {
        return 'fenced';
      }
      throw error;
    },
  );

/** One operation on a deletion as it stands in the table. */
const OPERATIONS: Record<string, (stores: Stores, deletion: DeletionRecord) => Promise<Result>> = {
  begin: async ({ deletions }, deletion) => (await deletions.begin(deletion)).status,
  cancel: ({ deletions }, deletion) =>
    refusedAs(deletions.cancel(deletion.tenant, deletion.deletionId)),
  expedite: ({ deletions }, deletion) =>
    refusedAs(deletions.expedite(deletion.tenant, deletion.deletionId)),
  start: async ({ deletions }, deletion) => (await deletions.start(deletion, 2, false)).status,
  nextRound: async ({ deletions }, deletion) => (await deletions.nextRound(deletion)).status,
  complete: async ({ deletions }, deletion) => (await deletions.complete(deletion)).status,
  fail: async ({ deletions }, deletion) => (await deletions.fail(deletion)).status,
  // A mark older than a moment from now is due: only the state decides.
  heartbeat: async ({ deletions }, deletion) =>
    (await deletions.heartbeat(deletion, new Date(Date.now() + 60_000))).status,
  claimVerification: async ({ deletions }, deletion) =>
    (await deletions.claimVerification(deletion)).status,
  claimStale: async ({ deletions }, deletion) => (await deletions.claimStale(deletion)).status,
  settle: async ({ chains, putChains }, deletion) => {
    const chainId = 'c'.repeat(20);
    await putChains(deletion, [{ chainId, prefix: `${deletion.prefix}a/` }]);
    const chain = await chains.get(deletion, chainId);
    if (!chain) throw new Error('the chain was not registered');
    const ended = await chains.recordListing(chain, 0, undefined, undefined);
    if (ended.status !== 'ok') throw new Error('the chain did not end');
    return (await chains.settle(ended.item)).status;
  },
};

describe.skipIf(process.env.LETHE_TEST_API_URL)('DeletionStore over DynamoDB', () => {
  let target: TestTarget;
  let stores: Stores;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
    // The stack's table without its pipeline: this is the item's contract, state by state, and
    // a live dispatcher would start a PENDING deletion (a sweeper resume one) under the test.
    await target.stop();
  });

  /** A deletion in `state`, with its stream DELETING by it (as a real one stands). */
  async function aDeletionIn(state: DeletionState, overrides: Partial<DeletionRecord> = {}) {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const deletion = aDeletion({
      tenant,
      deletionId: randomUUID(),
      state,
      bucket: target.local?.resources.bucket ?? '',
      prefix: `streams/${tenant}/logs/1/`,
      chainsTotal: 1,
      chainsSettled: 1,
      executeAfter: '2999-01-01T00:00:00.000Z',
      ...overrides,
    });
    await stores.table.putAll([
      {
        pk: `TENANT#${tenant}`,
        sk: 'STREAM#logs',
        ...aStream({ tenant, state: 'DELETING', deletionId: deletion.deletionId }),
      },
    ]);
    return stores.putDeletion(deletion);
  }

  describe.each(Object.keys(CONTRACT))('%s', (operation) => {
    it.each(DELETION_STATES)('in %s', async (state) => {
      // Prepare
      const deletion = await aDeletionIn(state);

      // Act
      const result = await OPERATIONS[operation]?.(stores, deletion);

      // Assess
      expect(result).toBe(CONTRACT[operation]?.[state]);
    });
  });

  it.each(['start', 'nextRound', 'complete', 'fail', 'heartbeat', 'settle'])(
    '%s is fenced for a deletion that moved on to another round',
    async (operation) => {
      const stored = await aDeletionIn(operation === 'start' ? 'PENDING' : 'RUNNING', {
        round: 2,
      });

      const result = await OPERATIONS[operation]?.(stores, { ...stored, round: 1 });

      expect(result).toBe('fenced');
    },
  );

  it('completes a deletion with its totals and frees the stream name', async () => {
    const deletion = await aDeletionIn('RUNNING');

    await stores.deletions.complete({ ...deletion, objectsDeleted: 7, bytesDeleted: 70 });

    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: 7,
      bytesDeleted: 70,
      completedAt: expect.any(String),
    });
    // Which deletion freed it: an offboarding that waited on the stream's cancelled one asks.
    expect(await stores.streams.find(deletion.tenant, 'logs')).toMatchObject({
      state: 'DELETED',
      deletedBy: deletion.deletionId,
    });
  });

  describe("a deletion's own items (chains, failures, uploads: they hold key names)", () => {
    /** A deletion with a chain, a key failure and an upload recorded, as its round left them. */
    async function withItems(state: DeletionState, overrides: Partial<DeletionRecord> = {}) {
      const deletion = await aDeletionIn(state, overrides);
      const chainId = 'c'.repeat(20);
      await stores.putChains(deletion, [{ chainId, prefix: `${deletion.prefix}a/` }]);
      await new FailureStore({ table: stores.table }).record(deletion, [
        { key: `${deletion.prefix}a/locked.json`, code: 'AccessDenied', message: 'denied' },
      ]);
      await new UploadStore({ table: stores.table }).record(deletion, [
        { key: `${deletion.prefix}big.bin`, uploadId: 'u1' },
      ]);
      const itemKeys = [
        keys.chain(deletion.deletionId, deletion.round, chainId),
        keys.failure(deletion.deletionId, deletion.round, `${deletion.prefix}a/locked.json`),
      ];
      for await (const key of stores.table.query<ItemKey>(itemsOf(deletion.deletionId), true)) {
        if (key.sk.startsWith('UPLOAD#')) itemKeys.push(key);
      }
      return { deletion, itemKeys };
    }
    const expiriesOf = async (itemKeys: ItemKey[]) =>
      Promise.all(
        itemKeys.map(
          async (key) => (await stores.table.read<Record<string, unknown>>(key))?.[TTL_ATTRIBUTE],
        ),
      );

    it.each([
      { kind: 'stream', overrides: {} },
      { kind: 'partition', overrides: { before: '2026-01-01' } },
    ])('expire with the receipt once a $kind deletion has COMPLETED', async ({ overrides }) => {
      // Prepare
      const { deletion, itemKeys } = await withItems('RUNNING', overrides);

      // Act
      const done = await stores.deletions.complete({ ...deletion, uploadsRecorded: true });

      // Assess
      const receipt = await stores.table.read<Record<string, unknown>>(
        keys.deletion(deletion.tenant, deletion.deletionId),
      );
      expect(done.status).toBe('ok');
      expect(itemKeys).toHaveLength(3);
      expect(receipt?.[TTL_ATTRIBUTE]).toEqual(expect.any(Number));
      expect(await expiriesOf(itemKeys)).toEqual(itemKeys.map(() => receipt?.[TTL_ATTRIBUTE]));
    });

    it('stay while it runs, and when it FAILED (a retry counts on them, its receipt lists them)', async () => {
      // Prepare
      const { deletion, itemKeys } = await withItems('RUNNING');

      // Act
      const running = await expiriesOf(itemKeys);
      const failed = await stores.deletions.fail(deletion);

      // Assess
      expect(failed.status).toBe('ok');
      expect(running).toEqual([undefined, undefined, undefined]);
      expect(await expiriesOf(itemKeys)).toEqual([undefined, undefined, undefined]);
    });

    it('stay when the completion is fenced', async () => {
      // Prepare: a verification read before an upload was recorded
      const { deletion, itemKeys } = await withItems('RUNNING');

      // Act
      const stale = await stores.deletions.complete(deletion);

      // Assess
      expect(stale.status).toBe('fenced');
      expect(await expiriesOf(itemKeys)).toEqual([undefined, undefined, undefined]);
    });
  });

  it('does not complete with totals read before a verification at once recorded an upload', async () => {
    // Arrange: two verifications of one round; the second read the deletion, then the first
    // recorded an upload and aborted it
    const deletion = await aDeletionIn('RUNNING');
    const uploads = new UploadStore({ table: stores.table });
    await uploads.record(deletion, [{ key: `${deletion.prefix}big.bin`, uploadId: 'u1' }]);

    // Act: the second completes with the totals of its read (no upload recorded, none counted)
    const stale = await stores.deletions.complete({ ...deletion, multipartUploadsAborted: 0 });
    const counted = await stores.deletions.complete({
      ...deletion,
      uploadsRecorded: true,
      multipartUploadsAborted: 1,
    });

    // Assess: the first's completion, with the upload counted, is the one that stands
    expect([stale.status, counted.status]).toEqual(['fenced', 'ok']);
    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      state: 'COMPLETED',
      multipartUploadsAborted: 1,
    });
  });

  it('does not complete a deletion whose stream another deletion holds', async () => {
    const deletion = await aDeletionIn('RUNNING');
    await stores.table.putAll([
      {
        pk: `TENANT#${deletion.tenant}`,
        sk: 'STREAM#logs',
        ...aStream({ tenant: deletion.tenant, state: 'DELETING', deletionId: randomUUID() }),
      },
    ]);

    expect((await stores.deletions.complete(deletion)).status).toBe('fenced');
    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      state: 'RUNNING',
    });
  });

  it('lets exactly one of many concurrent workers claim a round for verification', async () => {
    const deletion = await aDeletionIn('RUNNING');

    const claims = await Promise.all(
      Array.from({ length: 8 }, () => stores.deletions.claimVerification(deletion)),
    );

    const won = claims.filter((claim) => claim.status === 'ok');
    expect(won).toHaveLength(1);
    // The winner gets the deletion as claimed, each loser the deletion as it is: no read needed.
    expect(won[0]?.item).toMatchObject({ deletionId: deletion.deletionId, verifiedRound: 1 });
    for (const lost of claims.filter((claim) => claim.status !== 'ok')) {
      expect(lost).toMatchObject({ status: 'duplicate', current: { verifiedRound: 1 } });
    }
  });

  it('does not claim the verification of a round whose chains have not all settled', async () => {
    const deletion = await aDeletionIn('RUNNING', { chainsTotal: 2, chainsSettled: 1 });

    expect(await stores.deletions.claimVerification(deletion)).toMatchObject({
      status: 'duplicate',
      current: { state: 'RUNNING', chainsSettled: 1, chainsTotal: 2 },
    });
  });

  it('marks progress once per interval however many workers ask, and tells each the state', async () => {
    // Last marked long ago: due for a mark older than a second.
    const deletion = await aDeletionIn('RUNNING', { updatedAt: '2000-01-01T00:00:00.000Z' });
    const interval = () => new Date(Date.now() - 1000);

    const marks = await Promise.all(
      Array.from({ length: 6 }, () => stores.deletions.heartbeat(deletion, interval())),
    );
    const later = await stores.deletions.heartbeat(deletion, interval());

    expect(marks.filter((mark) => mark.status === 'ok')).toHaveLength(1);
    expect(later.status).toBe('duplicate');
    expect(later.status !== 'ok' && later.current?.state).toBe('RUNNING');
  });

  it('retries a FAILED deletion as a new round, and refuses a COMPLETED or CANCELLED one', async () => {
    const failed = await aDeletionIn('FAILED', { failedObjects: 3 });
    const completed = await aDeletionIn('COMPLETED');
    const cancelled = await aDeletionIn('CANCELLED');
    const scheduled = await aDeletionIn('SCHEDULED');

    const retried = await stores.deletions.retry(failed.tenant, failed.deletionId);

    expect(retried).toMatchObject({ state: 'PENDING', round: 2, attempts: 2, failedObjects: 0 });
    await expect(
      stores.deletions.retry(completed.tenant, completed.deletionId),
    ).rejects.toMatchObject({ code: 'DeletionNotRetryable', message: /has already completed/ });
    await expect(
      stores.deletions.retry(cancelled.tenant, cancelled.deletionId),
    ).rejects.toMatchObject({ code: 'DeletionNotRetryable', message: /was cancelled/ });
    // One still to run is answered as it is.
    expect(await stores.deletions.retry(scheduled.tenant, scheduled.deletionId)).toMatchObject({
      state: 'SCHEDULED',
      round: 1,
    });
  });

  it("counts the sweeper's resumes since the last progress; progress and a retry start afresh", async () => {
    const deletion = await aDeletionIn('RUNNING', { updatedAt: '2026-01-01T00:00:00.000Z' });
    const claim = async (seen: DeletionRecord) => {
      const claimed = await stores.deletions.claimStale(seen);
      if (claimed.status !== 'ok') throw new Error('not claimed');
      return claimed.item;
    };

    const once = await claim(deletion);
    const twice = await claim(once);
    // A heartbeat is not progress (a worker that fails after it has one); a chain settling is.
    await stores.deletions.heartbeat(twice, new Date(Date.now() + 60_000));
    const beating = await stores.deletions.get(deletion.tenant, deletion.deletionId);
    await stores.table.transact([stores.deletions.roundChains(twice, 'settled')]);
    const progressed = await stores.deletions.get(deletion.tenant, deletion.deletionId);
    const stalled = await claim(progressed ?? twice);
    await stores.deletions.fail(stalled);
    const retried = await stores.deletions.retry(deletion.tenant, deletion.deletionId);

    expect([once.stalls, twice.stalls, beating?.stalls]).toEqual([1, 2, 2]);
    expect(progressed?.stalls).toBeUndefined();
    expect(stalled).toMatchObject({ stalls: 1, attempts: deletion.attempts + 3 });
    expect(retried.stalls).toBeUndefined();
    expect(retried.attempts).toBe(deletion.attempts + 4);
  });

  it('claims a deletion for the Stalled verdict as no attempt: it resumes nothing', async () => {
    const deletion = await aDeletionIn('RUNNING', { attempts: 3, stalls: 2 });

    const verdict = await stores.deletions.claimStale(deletion, false);

    expect(verdict).toMatchObject({ status: 'ok', item: { attempts: 3, stalls: 3 } });
  });

  it("writes the sweeper's count of stalls with the pages it saw, and marks the round of a verdict", async () => {
    const deletion = await aDeletionIn('RUNNING', { attempts: 3, stalls: 2, round: 2 });

    const resumed = await stores.deletions.claimStale(deletion, true, { stalls: 1, pagesDone: 7 });
    const read = resumed.status === 'ok' ? resumed.item : deletion;
    const verdict = await stores.deletions.claimStale(read, false, { stalls: 2, pagesDone: 7 });

    expect(resumed).toMatchObject({
      status: 'ok',
      item: { attempts: 4, stalls: 1, progressSeen: 7, progressRound: 2 },
    });
    expect(resumed.status === 'ok' && resumed.item.stalledRound).toBe(undefined);
    expect(verdict).toMatchObject({
      status: 'ok',
      item: { attempts: 4, stalls: 2, progressSeen: 7, stalledRound: 2 },
    });
  });

  it('gives no Stalled verdict on a deletion whose round started, or gained a chain, since its claim', async () => {
    const claim = async (seen: DeletionRecord) => {
      const claimed = await stores.deletions.claimStale(seen, false);
      if (claimed.status !== 'ok') throw new Error('not claimed');
      return claimed.item;
    };
    const stalled = { code: 'Stalled', message: 'no progress after 3 attempts' };
    // The claim's own stream record reaches the dispatcher, which starts a PENDING deletion.
    const pending = await claim(await aDeletionIn('PENDING', { chainsTotal: 0, chainsSettled: 0 }));
    await stores.deletions.start(pending, 2, false);
    // A chain of a running one splits: its new chain was not there when the verdict read them.
    const running = await claim(await aDeletionIn('RUNNING', { chainsSettled: 0 }));
    await stores.table.transact([stores.deletions.roundChains(running, 'chainAdded')]);
    const untouched = await claim(await aDeletionIn('RUNNING', { chainsSettled: 0 }));
    // Its chain settles meanwhile (the verdict closed its last page): its totals still hold.
    await stores.table.transact([stores.deletions.roundChains(untouched, 'settled')]);

    expect((await stores.deletions.fail(pending, stalled)).status).toBe('fenced');
    expect((await stores.deletions.fail(running, stalled)).status).toBe('fenced');
    expect((await stores.deletions.fail(untouched, stalled)).status).toBe('ok');
  });

  it("keeps a FAILED stream deletion's receipt, the handle of its retry; other ended ones expire", async () => {
    const failed = await aDeletionIn('RUNNING');
    const partitions = await aDeletionIn('RUNNING', { before: '2026-01-01' });
    const completed = await aDeletionIn('RUNNING');

    await stores.deletions.fail(failed);
    await stores.deletions.fail(partitions);
    await stores.deletions.complete(completed);

    // The TTL's attribute, which the record type leaves out: the table's business.
    const stored = async (deletion: DeletionRecord) =>
      (await stores.deletions.get(deletion.tenant, deletion.deletionId)) as
        | (DeletionRecord & { expiresAt?: number })
        | undefined;
    expect(await stored(failed)).toMatchObject({ state: 'FAILED' });
    expect((await stored(failed))?.expiresAt).toBeUndefined();
    expect((await stored(partitions))?.expiresAt).toEqual(expect.any(Number));
    expect((await stored(completed))?.expiresAt).toEqual(expect.any(Number));
  });

  it('refuses a DELETE 409 StreamDeleting when the deleting stream names a deletion that is gone', async () => {
    // A receipt of a FAILED deletion that expired before this fix kept it.
    const gone = await aDeletionIn('FAILED');
    const key = { pk: `TENANT#${gone.tenant}`, sk: `DELETION#${gone.deletionId}` };
    await stores.table.transact([{ Delete: { TableName: stores.table.name, Key: key } }]);

    await expect(stores.deletions.request(gone.tenant, 'logs')).rejects.toMatchObject({
      status: 409,
      code: 'StreamDeleting',
    });
  });

  it('counts the deletions waiting out a grace window, without reading them', async () => {
    const before = await stores.index.scheduled();
    const later = new Date(Date.now() + 86_400_000).toISOString();
    await aDeletionIn('SCHEDULED', { executeAfter: later });
    await aDeletionIn('SCHEDULED', { executeAfter: later });
    await aDeletionIn('RUNNING');

    expect(await stores.index.scheduled()).toBe(before + 2);
  });

  it('lists open deletions by last progress for the sweeper, and claims a stale one once', async () => {
    // Fresh to the stack's own sweeper (it would claim a deletion it finds stale, racing the
    // claims under test), stale to a cutoff a day ahead.
    const old = await aDeletionIn('RUNNING', { updatedAt: new Date().toISOString() });

    const stale = [];
    for await (const deletion of stores.index.stale(new Date(Date.now() + 86_400_000))) {
      stale.push(deletion.deletionId);
    }
    const claims = await Promise.all([
      stores.deletions.claimStale(old),
      stores.deletions.claimStale(old),
    ]);

    expect(stale).toContain(old.deletionId);
    expect(claims.map((claim) => claim.status).sort()).toEqual(['duplicate', 'ok']);
  });

  describe('request', () => {
    it('writes the tombstone and a PENDING deletion of the current generation together', async () => {
      const tenant = `t${randomUUID().slice(0, 8)}`;
      await stores.streams.create(tenant, 'logs');

      const { created, deletion } = await stores.deletions.request(tenant, 'logs');

      expect(created).toBe(true);
      expect(deletion).toMatchObject({ state: 'PENDING', generation: 1, round: 1 });
      expect(await stores.deletions.get(tenant, deletion.deletionId)).toMatchObject({
        state: 'PENDING',
      });
      expect(await stores.streams.get(tenant, 'logs')).toMatchObject({
        state: 'DELETING',
        deletionId: deletion.deletionId,
      });
    });

    it('answers a repeat, and concurrent requests, with the one deletion under way', async () => {
      const tenant = `t${randomUUID().slice(0, 8)}`;
      await stores.streams.create(tenant, 'logs');

      const requests = await Promise.all(
        Array.from({ length: 6 }, () => stores.deletions.request(tenant, 'logs')),
      );
      const repeat = await stores.deletions.request(tenant, 'logs');

      expect(requests.filter((request) => request.created)).toHaveLength(1);
      const ids = new Set([...requests, repeat].map((request) => request.deletion.deletionId));
      expect(ids.size).toBe(1);
    });

    it('says no ingest was in flight only when none is as the tombstone is written', async () => {
      const tenant = `t${randomUUID().slice(0, 8)}`;
      const names = ['quiet', 'busy', 'racing', 'failed', 'racing-failed'];
      for (const name of names) await stores.streams.create(tenant, name);
      await stores.streams.admitIngest(tenant, 'busy');
      // An ingest whose write failed: S3 may still store its object.
      await stores.streams.abandonIngest(await stores.streams.admitIngest(tenant, 'failed'));
      // An ingest admitted between the request's read of the stream and its transaction (and,
      // for racing-failed, whose write failed in that time too).
      const streams = new (class extends StreamStore {
        readonly #raced = new Set<string>();
        override async find(tenant: string, stream: string) {
          const read = await super.find(tenant, stream);
          if (!this.#raced.has(stream) && stream.startsWith('racing')) {
            this.#raced.add(stream);
            const admitted = await this.admitIngest(tenant, stream);
            if (stream === 'racing-failed') await this.abandonIngest(admitted);
          }
          return read;
        }
      })({ table: stores.table, bucket: 'unused', root: 'streams' });
      const deletions = new DeletionStore({ table: stores.table, streams });

      const [settled, inFlight, raced, failed, racedFailed] = await Promise.all(
        names.map(async (name) => {
          const { deletion } = await deletions.request(tenant, name);
          return (await deletions.get(tenant, deletion.deletionId))?.ingestsSettled;
        }),
      );

      expect(settled).toBe(true);
      expect(inFlight).toBeUndefined();
      expect(failed).toBeUndefined();
      // The first transaction, conditioned on no ingest in flight, lost; the retry read it.
      expect(raced).toBeUndefined();
      expect(racedFailed).toBeUndefined();
    });

    it('refuses a stream that does not exist', async () => {
      await expect(stores.deletions.request('nobody', 'nothing')).rejects.toBeInstanceOf(
        StreamNotFoundError,
      );
    });
  });

  describe('a whole stream beside its partition deletion', () => {
    const CUTOFF = '2026-11-01';
    const streamWithPartitions = async () => {
      const tenant = `t${randomUUID().slice(0, 8)}`;
      await stores.streams.create(tenant, 'logs');
      const { deletion } = await stores.deletions.requestPartitions(tenant, 'logs', CUTOFF);
      return { tenant, partitions: deletion };
    };
    const failed = async (tenant: string, deletion: DeletionRecord) => {
      await stores.deletions.fail(deletion);
      return (await stores.deletions.get(tenant, deletion.deletionId)) as DeletionRecord;
    };

    it('refuses the stream 409 PartitionDeletionInProgress while the partition deletion runs', async () => {
      const { tenant, partitions } = await streamWithPartitions();

      await expect(stores.deletions.request(tenant, 'logs')).rejects.toBeInstanceOf(
        PartitionDeletionInProgressError,
      );

      expect(await stores.streams.get(tenant, 'logs')).toMatchObject({
        state: 'ACTIVE',
        partitionDeletionId: partitions.deletionId,
      });
    });

    it('deletes the stream once the partition deletion has ended, and that one cannot run again', async () => {
      const { tenant, partitions } = await streamWithPartitions();
      await failed(tenant, partitions);

      const { created } = await stores.deletions.request(tenant, 'logs');

      expect(created).toBe(true);
      await expect(stores.deletions.retry(tenant, partitions.deletionId)).rejects.toBeInstanceOf(
        DeletionNotRetryableError,
      );
      expect(await stores.deletions.get(tenant, partitions.deletionId)).toMatchObject({
        state: 'FAILED',
      });
    });

    it('lets a FAILED partition deletion run again while its stream still holds it', async () => {
      const { tenant, partitions } = await streamWithPartitions();
      await failed(tenant, partitions);

      const retried = await stores.deletions.retry(tenant, partitions.deletionId);

      expect(retried).toMatchObject({ state: 'PENDING', round: 2 });
    });

    it('decides a retry racing the tombstone by their conditions: exactly one wins', async () => {
      // The stream's request reads the FAILED partition deletion; the retry lands before its
      // transaction, which must then lose and refuse the stream as the partitions now run.
      const { tenant, partitions } = await streamWithPartitions();
      await failed(tenant, partitions);
      let raced = false;
      const deletions = new (class extends DeletionStore {
        override async get(tenant: string, deletionId: string) {
          const read = await super.get(tenant, deletionId);
          if (!raced && deletionId === partitions.deletionId) {
            raced = true;
            await stores.deletions.retry(tenant, deletionId);
          }
          return read;
        }
      })({ table: stores.table, streams: stores.streams });

      await expect(deletions.request(tenant, 'logs')).rejects.toBeInstanceOf(
        PartitionDeletionInProgressError,
      );

      expect(await stores.streams.get(tenant, 'logs')).toMatchObject({ state: 'ACTIVE' });
      expect(await stores.deletions.get(tenant, partitions.deletionId)).toMatchObject({
        state: 'PENDING',
      });
    });

    it('decides a retry racing a new partition deletion by their conditions: exactly one wins', async () => {
      // A partition deletion with another cutoff reads the FAILED one; the retry lands before
      // its transaction, which must then lose and refuse it as the old one runs again.
      const { tenant, partitions } = await streamWithPartitions();
      await failed(tenant, partitions);
      let raced = false;
      const deletions = new (class extends DeletionStore {
        override async get(tenant: string, deletionId: string) {
          const read = await super.get(tenant, deletionId);
          if (!raced && deletionId === partitions.deletionId) {
            raced = true;
            await stores.deletions.retry(tenant, deletionId);
          }
          return read;
        }
      })({ table: stores.table, streams: stores.streams });

      await expect(
        deletions.requestPartitions(tenant, 'logs', '2026-11-15'),
      ).rejects.toBeInstanceOf(PartitionDeletionInProgressError);

      expect(await stores.streams.get(tenant, 'logs')).toMatchObject({
        state: 'ACTIVE',
        partitionDeletionId: partitions.deletionId,
      });
      expect(await stores.deletions.get(tenant, partitions.deletionId)).toMatchObject({
        state: 'PENDING',
      });
    });
  });
});
