import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainRecord, KeyRange } from '../../../lib/core/index.ts';
import { collect } from '../../../lib/pipeline/index.ts';
import { REGISTRATION_HOLD_SECONDS } from '../../../lib/store/deletion-changes.ts';
import { aDeletion, aPage } from '../../helpers/records.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

/** The chain item's contract, against the emulator's DynamoDB. */
describe.skipIf(process.env.LETHE_TEST_API_URL)('ChainStore over DynamoDB', () => {
  let target: TestTarget;
  let stores: ReturnType<typeof storesOf>;
  const chainId = 'a'.repeat(20);

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
  });
  afterAll(async () => {
    await target?.stop();
  });

  const counts = (objects: number) => ({ objects, bytes: objects * 20, failed: 0 });

  /** A chain that has listed two pages and ended, both pages open: the chain, its last listing. */
  async function listedTwice() {
    const chain = await aChain();
    const first = await stores.chains.recordListing(chain, 0, aPage(), { key: 'k' });
    if (first.status !== 'ok') throw new Error('not listed');
    const last = await stores.chains.recordListing(first.item, 1, aPage({ page: 1 }), undefined);
    if (last.status !== 'ok') throw new Error('not listed');
    return { chain, last: last.item };
  }

  /** A chain of a RUNNING deletion of its own: over a child prefix, or over a key range. */
  async function aChain(round = 1, range?: KeyRange): Promise<ChainRecord> {
    const deletion = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), round, state: 'RUNNING', chainsTotal: 1 }),
    );
    const layout = range
      ? { chainId, prefix: deletion.prefix, range }
      : { chainId, prefix: `${deletion.prefix}p/` };
    await stores.putChains(deletion, [layout]);
    const chain = await stores.chains.get(deletion, chainId);
    if (!chain) throw new Error('the chain was not registered');
    return chain;
  }

  it("registers a chain with its deletion's fence and the time, and keeps its progress on a repeat", async () => {
    const before = Date.now();
    const chain = await aChain();
    const listed = await stores.chains.recordListing(chain, 0, aPage(), { key: 'k' });

    await stores.chains.register(
      { ...aDeletion({ deletionId: chain.deletionId }) },
      [{ chainId, prefix: chain.prefix }],
      false,
    );

    expect(chain).toMatchObject({ generation: 1, location: 'streams/acme/logs/1/', lastPage: -1 });
    expect(chain.registeredAt).toBeGreaterThanOrEqual(before);
    expect(chain.registeredAt).toBeLessThanOrEqual(Date.now());
    expect(listed.status).toBe('ok');
    expect(await stores.chains.get(chain, chainId)).toMatchObject({
      lastPage: 0,
      registeredAt: chain.registeredAt,
    });
  });

  it('begins a round: its chains and its start in one transaction, or nothing', async () => {
    const pending = () =>
      stores.putDeletion(aDeletion({ deletionId: randomUUID(), state: 'PENDING' }));
    const layout = (deletion: { prefix: string }, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        chainId: String(i).repeat(20),
        prefix: `${deletion.prefix}p${i}/`,
      }));
    const deletion = await pending();
    const begun = await stores.chains.begin(deletion, layout(deletion, 3), true);
    const again = await stores.chains.begin(deletion, layout(deletion, 3), true);
    // A chain made on its own (a round begun chain by chain): the transaction writes nothing.
    const other = await pending();
    await stores.chains.register(other, layout(other, 1), false);
    const refused = await stores.chains.begin(other, layout(other, 2), false);

    expect(begun.status).toBe('ok');
    expect(await collect(stores.chains.list(deletion))).toEqual(
      begun.status === 'ok' ? begun.item : [],
    );
    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      state: 'RUNNING',
      chainsTotal: 3,
      chainsSettled: 0,
      versioned: true,
    });
    // Begun again once started: fenced by the start, whatever chains it names.
    expect(again.status).toBe('fenced');
    expect(refused.status).toBe('duplicate');
    expect(await collect(stores.chains.list(other))).toHaveLength(1);
    expect((await stores.deletions.get(other.tenant, other.deletionId))?.state).toBe('PENDING');
  });

  it("begins a round with its first chain's first page open, listed already: the page then counts and settles that chain", async () => {
    const deletion = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'PENDING' }),
    );
    const layout = [0, 1].map((i) => ({
      chainId: String(i).repeat(20),
      prefix: `${deletion.prefix}p${i}/`,
    }));
    const page = aPage({ page: 0, lastKey: `${deletion.prefix}p0/z`, count: 2, bytes: 40 });

    const begun = await stores.chains.begin(deletion, layout, false, { page });
    if (begun.status !== 'ok') throw new Error('not begun');
    const [opened, other] = await collect(stores.chains.list(deletion));
    const counted = opened && (await stores.chains.completePage(opened, page, counts(2)));

    // The page as the chain holds it: with when it was listed, the chain's start.
    const held = { ...page, listedAt: opened?.startedAt };
    expect(begun.item).toEqual(
      expect.arrayContaining([expect.objectContaining({ lastPage: 0, open: { '0': held } })]),
    );
    expect(opened).toMatchObject({ lastPage: 0, ended: true, open: { '0': held } });
    expect(opened?.startedAt).toBeGreaterThan(0);
    expect(opened).not.toHaveProperty('cursor');
    expect(other).toMatchObject({ lastPage: -1, ended: false, open: {} });
    expect(counted?.status).toBe('ok');
    expect(await stores.chains.get(deletion, layout[0]?.chainId ?? '')).toMatchObject({
      settled: true,
      objectsDeleted: 2,
    });
    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      chainsTotal: 2,
      chainsSettled: 1,
    });
  });

  it('begins a round whose first chain goes on past its first page from where that page ended', async () => {
    const deletion = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'PENDING' }),
    );
    const page = aPage({ page: 0, lastKey: `${deletion.prefix}p/k` });

    await stores.chains.begin(deletion, [{ chainId, prefix: `${deletion.prefix}p/` }], false, {
      page,
      next: { key: page.lastKey },
    });
    const chain = await stores.chains.get(deletion, chainId);
    const second = chain && (await stores.chains.recordListing(chain, 1, undefined, undefined));

    expect(chain).toMatchObject({ lastPage: 0, ended: false, cursor: { key: page.lastKey } });
    expect(second?.status).toBe('ok');
  });

  it('begins no round in one transaction once it is marked as registering, whatever chains it names', async () => {
    // Prepare: a dispatcher marked the round before making its chains one by one, none made yet
    const deletion = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'PENDING' }),
    );
    const marked = await stores.deletions.markRegistering(deletion, 'first');
    const layout = [{ chainId, prefix: `${deletion.prefix}p/` }];

    // Act: a call that read the deletion before the mark tries the transaction; another call
    // tries to mark the round and to start it while the first holds it.
    const refused = await stores.chains.begin(deletion, layout, false);
    const second = await stores.deletions.markRegistering(deletion, 'second');
    const startedBySecond = await stores.deletions.start(deletion, 1, false, 'second');

    // Assess: a duplicate (go chain by chain), not fenced; nothing written, the round not
    // started; only the holder may mark it again, or start it.
    expect(marked.status).toBe('ok');
    expect(refused.status).toBe('duplicate');
    expect(second.status).toBe('fenced');
    expect(startedBySecond.status).toBe('fenced');
    expect((await stores.deletions.markRegistering(deletion, 'first')).status).toBe('ok');
    expect(await collect(stores.chains.list(deletion))).toEqual([]);
    expect(await stores.deletions.get(deletion.tenant, deletion.deletionId)).toMatchObject({
      state: 'PENDING',
      registeredRound: 1,
      registeredBy: 'first',
    });
    expect((await stores.deletions.start(deletion, 1, false, 'first')).status).toBe('ok');
    // The next round may begin in one transaction again; a round under way is not marked.
    const running = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'RUNNING', chainsTotal: 1 }),
    );
    expect((await stores.deletions.markRegistering(running, 'first')).status).toBe('fenced');
    const next = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'PENDING', round: 2, registeredRound: 1 }),
    );
    expect((await stores.chains.begin(next, layout, false)).status).toBe('ok');
  });

  it('lets a call take over the registration of a round held by one that has ended', async () => {
    // Prepare: a call took it longer ago than any function that dispatches runs
    const heldAt = new Date(Date.now() - (REGISTRATION_HOLD_SECONDS + 1) * 1000).toISOString();
    const deletion = await stores.putDeletion(
      aDeletion({
        deletionId: randomUUID(),
        state: 'PENDING',
        registeredRound: 1,
        registeredBy: 'ended',
        registeredAt: heldAt,
      }),
    );

    // Act
    const taken = await stores.deletions.markRegistering(deletion, 'next');

    // Assess
    expect(taken.status).toBe('ok');
    expect((await stores.deletions.start(deletion, 0, false, 'ended')).status).toBe('fenced');
    expect((await stores.deletions.start(deletion, 0, false, 'next')).status).toBe('ok');
  });

  it('begins no round of a deletion that is not PENDING in it', async () => {
    const running = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'RUNNING', chainsTotal: 1 }),
    );
    const layout = [{ chainId, prefix: `${running.prefix}p/` }];

    const outcome = await stores.chains.begin(running, layout, false);

    expect(outcome.status).toBe('fenced');
    expect(await collect(stores.chains.list(running))).toEqual([]);
  });

  it('records each page number once: a second listing of it is a duplicate', async () => {
    const chain = await aChain();

    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => stores.chains.recordListing(chain, 0, aPage(), { key: 'k' })),
    );

    expect(outcomes.filter((outcome) => outcome.status === 'ok')).toHaveLength(1);
    const winner = outcomes.find((outcome) => outcome.status === 'ok');
    expect(winner?.status === 'ok' && winner.item).toMatchObject({
      lastPage: 0,
      cursor: { key: 'k' },
      ended: false,
      open: { 0: aPage() },
    });
  });

  it('refuses a page listed out of order', async () => {
    const chain = await aChain();

    expect(
      (await stores.chains.recordListing(chain, 1, aPage({ page: 1 }), undefined)).status,
    ).toBe('duplicate');
  });

  it('counts a page once however often its deletion is reported', async () => {
    const chain = await aChain();
    const listed = await stores.chains.recordListing(chain, 0, aPage(), undefined);
    if (listed.status !== 'ok') throw new Error('not listed');

    const counts = await Promise.all(
      Array.from({ length: 4 }, () =>
        stores.chains.completePage(listed.item, aPage(), { objects: 3, bytes: 60, failed: 0 }),
      ),
    );

    expect(counts.filter((count) => count.status === 'ok')).toHaveLength(1);
    expect(await stores.chains.get(chain, chainId)).toMatchObject({
      objectsDeleted: 3,
      bytesDeleted: 60,
      pagesDone: 1,
      open: {},
      ended: true,
    });
  });

  it('settles a chain that has ended with its last page, in the transaction that counts it', async () => {
    const { chain, last } = await listedTwice();

    // Page 1 closes while page 0 is open: nothing settles.
    const early = await stores.chains.completePage(last, aPage({ page: 1 }), counts(2));
    if (early.status !== 'ok') throw new Error('not counted');
    const settling = await stores.chains.completePage(early.item, aPage(), counts(3));

    expect(early.item.settled).toBe(false);
    expect(settling).toEqual({ status: 'ok', item: await stores.chains.get(chain, chainId) });
    expect(settling.status === 'ok' && settling.item).toMatchObject({
      settled: true,
      open: {},
      objectsDeleted: 5,
      pagesDone: 2,
    });
    expect(await stores.deletions.get(chain.tenant, chain.deletionId)).toMatchObject({
      chainsSettled: 1,
    });
  });

  it('settles nothing from a chain read before another page closed: the page is counted alone', async () => {
    const { chain, last } = await listedTwice();
    await stores.chains.completePage(last, aPage(), counts(3));
    // As page 1's worker would have read it had page 0 closed just after its read, pagesDone 0.
    const stale = { ...last, open: { 1: aPage({ page: 1 }) } };

    const closed = await stores.chains.completePage(stale, aPage({ page: 1 }), counts(2));

    expect(closed.status === 'ok' && closed.item).toMatchObject({
      settled: false,
      objectsDeleted: 5,
      pagesDone: 2,
    });
    expect(await stores.deletions.get(chain.tenant, chain.deletionId)).toMatchObject({
      chainsSettled: 0,
    });
  });

  it("stamps the chain's start on its first listing only", async () => {
    const chain = await aChain();

    const first = await stores.chains.recordListing(chain, 0, aPage(), { key: 'k' }, 1_000);
    if (first.status !== 'ok') throw new Error('not listed');
    await stores.chains.recordListing(first.item, 1, aPage({ page: 1 }), { key: 'l' }, 2_000);

    expect(await stores.chains.get(chain, chainId)).toMatchObject({ startedAt: 1_000 });
  });

  it('slows a chain down, and adds each rise to the pace it holds then', async () => {
    const chain = await aChain();
    const listed = await stores.chains.recordListing(chain, 0, aPage(), undefined, 0);
    if (listed.status !== 'ok') throw new Error('not listed');

    const cut = await stores.chains.slowDown(
      chain,
      { pace: 85, ceiling: 100, nextAt: 5_000, cutAt: 4_000 },
      undefined,
    );
    // A second refusal of a page let go before that cut changes nothing.
    const again = await stores.chains.slowDown(
      chain,
      { pace: 72, ceiling: 85, nextAt: 6_000, cutAt: 4_100 },
      undefined,
    );
    // The page was read before the cut; its rise lands on the cut pace, not on the one it saw.
    await stores.chains.completePage(
      { ...listed.item, pace: 120 },
      aPage(),
      {
        objects: 3,
        bytes: 60,
        failed: 0,
      },
      { rise: 1.5, sentAt: 4_200 },
    );

    expect(cut).toEqual({ ok: true });
    expect(again).toMatchObject({ ok: false, current: { pace: 85, cutAt: 4_000 } });
    expect(await stores.chains.get(chain, chainId)).toMatchObject({
      pace: 86.5,
      sentAt: 4_200,
      ceiling: 100,
      nextAt: 5_000,
      cutAt: 4_000,
      objectsDeleted: 3,
    });
  });

  it("lets one page take a paced chain's slot, and none with a slot it read before another took it", async () => {
    const chain = await aChain();
    await stores.chains.slowDown(chain, { pace: 10, nextAt: 5_000, cutAt: 4_000 }, undefined);
    const paced = { ...chain, pace: 10, nextAt: 5_000 };

    const takes = await Promise.all(
      Array.from({ length: 3 }, () => stores.chains.takeSlot(paced, 5_300)),
    );
    const stale = await stores.chains.takeSlot(paced, 5_600);

    // The page that took it gets the chain as taken.
    expect(takes.filter(Boolean)).toEqual([expect.objectContaining({ pace: 10, nextAt: 5_300 })]);
    expect(stale).toBeUndefined();
    expect(await stores.chains.get(chain, chainId)).toMatchObject({ nextAt: 5_300 });
  });

  it('adds no pace, and no time sent, to a chain that was never slowed down', async () => {
    const chain = await aChain();
    const listed = await stores.chains.recordListing(chain, 0, aPage(), undefined, 0);
    if (listed.status !== 'ok') throw new Error('not listed');

    await stores.chains.completePage(
      listed.item,
      aPage(),
      { objects: 3, bytes: 60, failed: 0 },
      {
        rise: 5,
        sentAt: 4_200,
      },
    );

    const stored = await stores.chains.get(chain, chainId);
    expect(stored).toMatchObject({ objectsDeleted: 3 });
    expect(stored?.pace).toBeUndefined();
    expect(stored?.sentAt).toBeUndefined();
  });

  it('settles an ended chain once, counting it on its deletion', async () => {
    const chain = await aChain();
    const ended = await stores.chains.recordListing(chain, 0, undefined, undefined);
    if (ended.status !== 'ok') throw new Error('not ended');

    const first = await stores.chains.settle(ended.item);
    const second = await stores.chains.settle(ended.item);

    expect([first.status, second.status]).toEqual(['ok', 'duplicate']);
    expect(await stores.deletions.get(chain.tenant, chain.deletionId)).toMatchObject({
      chainsSettled: 1,
    });
  });

  it('splits a range chain: it keeps the keys below the split, a new chain takes the rest, the deletion counts one more chain', async () => {
    const location = aDeletion().prefix;
    const range = { below: `${location}dt=9/` };
    const chain = await aChain(1, range);
    const at = `${location}dt=5/`;

    const outcomes = await Promise.all([
      stores.chains.split(chain, 0, at),
      stores.chains.split(chain, 0, at),
    ]);

    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['duplicate', 'ok']);
    expect((await stores.chains.get(chain, chainId))?.range).toEqual({ below: at });
    const added = outcomes.find((outcome) => outcome.status === 'ok');
    const addedId = added?.status === 'ok' ? added.item.chainId : '';
    expect(await stores.chains.get(chain, addedId)).toMatchObject({
      prefix: location,
      range: { from: at, below: range.below },
      lastPage: -1,
      generation: chain.generation,
      location: chain.location,
    });
    expect(await stores.deletions.get(chain.tenant, chain.deletionId)).toMatchObject({
      chainsTotal: 2,
    });
  });

  it('refuses to split a chain that listed on meanwhile, or whose deletion no longer runs', async () => {
    const chain = await aChain(1, {});
    await stores.chains.recordListing(chain, 0, aPage(), { key: 'k' });
    const moved = await stores.chains.split(chain, 0, `${chain.location}dt=5/`);

    const other = await aChain(1, {});
    await stores.putDeletion(
      aDeletion({ deletionId: other.deletionId, state: 'COMPLETED', chainsTotal: 1 }),
    );
    const fenced = await stores.chains.split(other, 0, `${other.location}dt=5/`);

    expect(moved.status).toBe('duplicate');
    expect(fenced.status).toBe('fenced');
  });

  it('stops a chain for good (a Stalled verdict): nothing is listed in it or split off it after, and its open pages still close', async () => {
    const chain = await aChain(1, {});
    const first = await stores.chains.recordListing(chain, 0, aPage(), { key: 'k' });
    if (first.status !== 'ok') throw new Error('not listed');

    const stopped = await stores.chains.stop(chain);
    const listed = await stores.chains.recordListing(first.item, 1, aPage({ page: 1 }), {
      key: 'l',
    });
    const split = await stores.chains.split(first.item, 1, `${chain.location}dt=5/`);
    const closed = await stores.chains.completePage(first.item, aPage(), counts(3));

    // The stop answers the chain as it is, with the pages opened before it.
    expect(stopped).toMatchObject({
      status: 'ok',
      item: { stopped: true, lastPage: 0, open: { '0': expect.any(Object) } },
    });
    expect(listed.status).toBe('duplicate');
    expect(split.status).toBe('duplicate');
    expect(closed.status).toBe('ok');
    expect(await stores.chains.get(chain, chainId)).toMatchObject({
      lastPage: 0,
      objectsDeleted: 3,
      open: {},
    });
  });

  it('marks a range chain indivisible', async () => {
    const chain = await aChain(1, {});

    await stores.chains.markIndivisible(chain);

    expect((await stores.chains.get(chain, chainId))?.range).toEqual({ indivisible: true });
  });

  it('adds no chain to a round under way, however stale the image that asks', async () => {
    // A round started with one chain; an old PENDING image of it lays out another two.
    const running = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'RUNNING', chainsTotal: 1 }),
    );
    const kept = { chainId, prefix: `${running.prefix}p/` };
    await stores.putChains(running, [kept]);
    const stale = { ...running, state: 'PENDING' as const };
    const more = [kept, { chainId: 'b'.repeat(20), prefix: `${running.prefix}q/` }];
    const pending = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), state: 'PENDING' }),
    );

    const begun = await stores.chains.begin(stale, more, false);
    const registered = await stores.chains.register(stale, more, false);
    const allowed = await stores.chains.register(
      pending,
      [{ chainId, prefix: `${pending.prefix}p/` }],
      false,
    );

    expect(begun.status).toBe('fenced');
    expect(registered.status).toBe('fenced');
    expect((await collect(stores.chains.list(running))).map((chain) => chain.chainId)).toEqual([
      chainId,
    ]);
    expect(await stores.deletions.get(running.tenant, running.deletionId)).toMatchObject({
      state: 'RUNNING',
      chainsTotal: 1,
    });
    expect(allowed.status).toBe('ok');
    expect(await collect(stores.chains.list(pending))).toHaveLength(1);
  });

  it("sums every chain of every round, and the current round's failures only", async () => {
    const deletion = await stores.putDeletion(
      aDeletion({ deletionId: randomUUID(), round: 2, state: 'RUNNING' }),
    );
    for (const round of [1, 2]) {
      const inRound = { ...deletion, round };
      await stores.putChains(inRound, [{ chainId, prefix: `${deletion.prefix}p/` }]);
      const chain = await stores.chains.get(inRound, chainId);
      if (!chain) throw new Error('not registered');
      const listed = await stores.chains.recordListing(chain, 0, aPage(), undefined);
      if (listed.status !== 'ok') throw new Error('not listed');
      await stores.chains.completePage(listed.item, aPage(), { objects: 2, bytes: 20, failed: 1 });
    }

    expect(await stores.chains.totals(deletion)).toEqual({
      objectsDeleted: 4,
      bytesDeleted: 40,
      failedObjects: 1,
    });
  });
});
