import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockOf, type DeletionRecord } from '../../../lib/core/index.ts';
import { OffboardingStore, TakenInAlreadyError } from '../../../lib/store/index.ts';
import { waitFor } from '../../helpers/http.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

/** Links between an offboarding and its deletions, and their count, against the emulator's DynamoDB. */
describe.skipIf(process.env.LETHE_TEST_API_URL)('OffboardingStore links and counts', () => {
  let target: TestTarget;
  let stores: ReturnType<typeof storesOf>;
  let offboardings: OffboardingStore;
  const tenant = () => `t${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
    offboardings = new OffboardingStore({ table: stores.table });
  });
  afterAll(async () => {
    await target?.stop();
  });

  /** A stream of the tenant and its deletion, requested as a user would (a grace window). */
  async function deletionOf(name: string, stream: string) {
    await stores.streams.create(name, stream);
    return (await stores.deletions.request(name, stream, 3600)).deletion.deletionId;
  }

  it('links a deletion under way once, and the deletion then names the offboarding', async () => {
    // Arrange
    const name = tenant();
    const deletionId = await deletionOf(name, 'a');
    const { offboarding } = await offboardings.request(name, 0);

    // Act
    const first = await offboardings.link(offboarding, 'a', deletionId);
    const again = await offboardings.link(offboarding, 'a', deletionId);
    const gone = await offboardings.link(offboarding, 'b', randomUUID());

    // Assess
    expect([first, again, gone]).toEqual([true, false, false]);
    expect(await stores.deletions.get(name, deletionId)).toMatchObject({
      offboardingId: offboarding.offboardingId,
    });
    // Requested before the offboarding: adopted, which its cancel leaves.
    const links = [];
    for await (const link of offboardings.links(offboarding)) links.push(link);
    expect(links).toEqual([expect.objectContaining({ stream: 'a', deletionId, adopted: true })]);
  });

  it('relinks a stream as adopted, or as its own, as the deletion it now names was requested', async () => {
    // Arrange: a stream taken in with a deletion of the offboarding's own (the tenant has no
    // stream records: its fan-out takes nothing in beside this)
    const name = tenant();
    const { offboarding } = await offboardings.request(name, 3600);
    const own = randomUUID();
    await stores.table.transact(offboardings.linkItems(offboarding, 'a', own));
    const linkOf = async () => {
      for await (const link of offboardings.links(offboarding)) return link;
    };
    const [adopted, mine] = [randomUUID(), randomUUID()];

    // Act + Assess
    expect(await linkOf()).not.toHaveProperty('adopted');
    expect(await offboardings.relink(offboarding, 'a', own, adopted, true)).toBe(true);
    expect(await linkOf()).toMatchObject({ deletionId: adopted, adopted: true });
    expect(await offboardings.relink(offboarding, 'a', adopted, mine)).toBe(true);
    expect(await linkOf()).toMatchObject({ deletionId: mine });
    expect(await linkOf()).not.toHaveProperty('adopted');
  });

  it('writes the end of a grace window once, after a last write within it', async () => {
    // Arrange: an offboarding with a window of a minute, read back at the end of it
    const name = tenant();
    const { offboarding } = await offboardings.request(name, 60);
    const later = new OffboardingStore({
      table: stores.table,
      clock: clockOf(() => new Date(Date.parse(offboarding.executeAfter) + 1000)),
    });

    // Act
    const first = await later.windowEnded(offboarding);
    const again = await later.windowEnded(offboarding);

    // Assess: its updatedAt is past the window, so the publisher reads it as RUNNING
    expect([first, again]).toEqual([true, false]);
    const item = await offboardings.get(name);
    expect(Date.parse(item?.updatedAt ?? '')).toBeGreaterThan(Date.parse(offboarding.executeAfter));
  });

  it('counts a linked deletion once, and neither another deletion of the stream nor another offboarding', async () => {
    // Arrange: an offboarding that took two streams in
    const name = tenant();
    const a = await deletionOf(name, 'a');
    const b = await deletionOf(name, 'b');
    const { offboarding } = await offboardings.request(name, 0);
    await offboardings.link(offboarding, 'a', a);
    await offboardings.link(offboarding, 'b', b);

    // Act
    const first = await offboardings.countCompleted(offboarding, 'a', a);
    const repeated = await offboardings.countCompleted(offboarding, 'a', a);
    const otherDeletion = await offboardings.countCompleted(offboarding, 'b', randomUUID());
    const unlinked = await offboardings.countCompleted(offboarding, 'c', randomUUID());
    const otherOffboarding = await offboardings.countCompleted(
      { offboardingId: randomUUID() },
      'b',
      b,
    );
    const afterOne = await offboardings.completedCount(offboarding);
    const second = await offboardings.countCompleted(offboarding, 'b', b);

    // Assess
    expect([first, repeated, otherDeletion, unlinked, otherOffboarding, second]).toEqual([
      true,
      false,
      false,
      false,
      false,
      true,
    ]);
    expect(afterOne).toBe(1);
    expect(await offboardings.completedCount(offboarding)).toBe(2);
    // The count is not on the offboarding item: a write to it during the fan-out asks for a step.
    const item = await offboardings.get(name);
    expect(item).toMatchObject({ streams: 2 });
    expect(Object.keys(item ?? {}).filter((key) => /complete|deletions/i.test(key))).toEqual([]);
  });

  it('answers that a stream is taken in already when a repeated step requests it again after its deletion was cancelled', async () => {
    // Arrange: an offboarding whose own fan-out has ended (it took in the tenant's one stream,
    // z, whose deletion waits out the window: the offboarding runs), then a step's first run
    // takes a stream in, and its deletion is cancelled (the stream ACTIVE again)
    const name = tenant();
    await stores.streams.create(name, 'z');
    const { offboarding } = await offboardings.request(name, 3600);
    await waitFor(
      'the fan-out to end',
      async () => (await offboardings.get(name))?.fannedOut || undefined,
    );
    await stores.streams.create(name, 'a');
    const takenIn = {
      offboardingId: offboarding.offboardingId,
      linkItems: (fresh: DeletionRecord) =>
        offboardings.linkItems(offboarding, 'a', fresh.deletionId),
    };
    const first = await stores.deletions.request(name, 'a', 3600, takenIn);
    await stores.deletions.cancel(name, first.deletion.deletionId);

    // Act: the step runs again (its first run died before it recorded how far it got)
    const again = stores.deletions.request(name, 'a', 3600, takenIn);

    // Assess: refused at once as taken in (before: ten lost races, then RetriesExhaustedError,
    // and the step failed every time), and nothing written: the stream ACTIVE, one link
    await expect(again).rejects.toThrow(TakenInAlreadyError);
    expect(await stores.streams.find(name, 'a')).toMatchObject({ state: 'ACTIVE' });
    expect(await offboardings.get(name)).toMatchObject({ streams: 2 });
  });

  it('takes no stream in once cancelled, for a step or a sweep that read it RUNNING before', async () => {
    // Arrange: an offboarding running (its fan-out took in z, whose deletion waits out the
    // window); stream a taken in and its deletion cancelled (as a cancel of the offboarding
    // does), stream b not taken in yet; then the offboarding is cancelled
    const name = tenant();
    await stores.streams.create(name, 'z');
    const { offboarding } = await offboardings.request(name, 3600);
    await waitFor(
      'the fan-out to end',
      async () => (await offboardings.get(name))?.fannedOut || undefined,
    );
    await stores.streams.create(name, 'a');
    await stores.streams.create(name, 'b');
    const { offboardingId } = offboarding;
    const first = await stores.deletions.request(name, 'a', 3600, {
      offboardingId,
      linkItems: (fresh) => offboardings.linkItems(offboarding, 'a', fresh.deletionId),
    });
    await stores.deletions.cancel(name, first.deletion.deletionId);
    await offboardings.cancel(name);

    // Act: a step takes b in, a sweep takes a in again, each from its read of it RUNNING (both
    // awaited together: the one refused first is never left a rejection nothing handles yet)
    const [step, retake] = await Promise.allSettled([
      stores.deletions.request(name, 'b', 0, {
        offboardingId,
        linkItems: (fresh) => offboardings.linkItems(offboarding, 'b', fresh.deletionId),
      }),
      stores.deletions.request(name, 'a', 0, {
        offboardingId,
        linkItems: (fresh) =>
          offboardings.relinkItems(offboarding, 'a', first.deletion.deletionId, fresh.deletionId),
      }),
    ]);

    // Assess: nothing requested (before: both deletions PENDING at once, grace 0)
    expect(step).toMatchObject({ status: 'rejected', reason: expect.any(TakenInAlreadyError) });
    expect(retake).toMatchObject({ status: 'rejected', reason: expect.any(TakenInAlreadyError) });
    expect(await stores.streams.find(name, 'a')).toMatchObject({ state: 'ACTIVE' });
    expect(await stores.streams.find(name, 'b')).toMatchObject({ state: 'ACTIVE' });
  });
});
