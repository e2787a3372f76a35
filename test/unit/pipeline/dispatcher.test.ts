import {
  type BucketVersioningStatus,
  GetBucketVersioningCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChainLayout,
  type ChainRecord,
  chainIdOf,
  type DeletionRecord,
  done,
  duplicate,
  fenced,
  ok,
  pageMessage,
  withFirstPage,
} from '../../../lib/core/index.ts';
import type { DispatcherOptions } from '../../../lib/pipeline/dispatcher.ts';
import { Dispatcher, type Finalizer, type PageWorker } from '../../../lib/pipeline/index.ts';
import type { ChainStore, DeletionStore } from '../../../lib/store/index.ts';
import { aChain, aDeletion, DELETION_ID } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const location = 'streams/acme/logs/1/';
const day = (n: number) => `${location}dt=2026-01-0${n}/`;
const ref = { tenant: 'acme', deletionId: DELETION_ID, round: 1 };

/**
 * A dispatcher over a deletion that reads as `states`, one read after another (the last one
 * stays), and a chain store holding `existing` chains and every chain registered since.
 */
function dispatcher(
  states: Array<DeletionRecord | undefined>,
  existing: ChainRecord[] = [],
  detectVersioning = false,
  deletesFirstPage = true,
) {
  const registered = [...existing];
  let marked = false;
  const deletions = {
    get: vi.fn<DeletionStore['get']>(async () => (states.length > 1 ? states.shift() : states[0])),
    start: vi.fn<DeletionStore['start']>(async () => done),
    markRegistering: vi.fn<DeletionStore['markRegistering']>(async () => {
      marked = true;
      return done;
    }),
  } satisfies DispatcherOptions['deletions'];
  const made = (planned: ChainLayout[], versioned: boolean) =>
    planned.map(({ chainId, prefix }) => aChain({ chainId, prefix, versioned }));
  const isRegistered = ({ chainId }: ChainLayout) =>
    registered.some((chain) => chain.chainId === chainId);
  const chains = {
    // The transaction: every chain created and the round started, or nothing written.
    begin: vi.fn<ChainStore['begin']>(async (deletion, planned, versioned, firstPage) => {
      if (marked || planned.some(isRegistered)) return duplicate();
      if ((await deletions.start(deletion, planned.length, versioned)).status !== 'ok') {
        return fenced();
      }
      const begun = made(planned, versioned).map((chain, index) =>
        index === 0 && firstPage ? withFirstPage(chain, firstPage, 0) : chain,
      );
      registered.push(...begun);
      return ok(begun);
    }),
    register: vi.fn<ChainStore['register']>(async (_deletion, planned, versioned) => {
      registered.push(
        ...made(
          planned.filter((layout) => !isRegistered(layout)),
          versioned,
        ),
      );
      return done;
    }),
    list: vi.fn<ChainStore['list']>(async function* () {
      yield* registered;
    }),
  } satisfies DispatcherOptions['chains'];
  const queue = {
    send: vi.fn<DispatcherOptions['queue']['send']>(async () => {}),
  } satisfies DispatcherOptions['queue'];
  const finalizer = {
    finalize: vi.fn<Finalizer['finalize']>(async () => 'completed'),
  } satisfies DispatcherOptions['finalizer'];
  const pages = {
    deleteListed: vi.fn<PageWorker['deleteListed']>(async (_chain, page) => ({
      outcome: 'deleted',
      objects: page.count,
      bytes: page.bytes,
      failures: 0,
      retriedKeys: 0,
    })),
  } satisfies DispatcherOptions['pages'];
  const subject = new Dispatcher({
    deletions,
    chains,
    s3: new S3Client({ region: 'us-east-1' }),
    queue,
    finalizer,
    detectVersioning,
    ...(deletesFirstPage ? { pages } : {}),
  });
  return { subject, deletions, chains, queue, finalizer, pages };
}

/** A PENDING deletion, then RUNNING once the dispatcher has started it. */
const pendingThenRunning = (overrides: Partial<DeletionRecord> = {}, chainsTotal = 2) => [
  aDeletion({ state: 'PENDING', ...overrides }),
  aDeletion({ state: 'RUNNING', chainsTotal, ...overrides }),
];

/**
 * The location lists as these child prefixes and direct keys; listed flat (no delimiter) it
 * takes more than one page unless `onePage`.
 */
const children = (prefixes: string[], keys: string[] = [], onePage = false) => {
  s3.on(ListObjectsV2Command).resolves({
    Contents: [{ Key: `${prefixes[0] ?? location}part-0.json`, Size: 3 }],
    IsTruncated: !onePage,
    ...(onePage ? {} : { NextContinuationToken: 'more' }),
  });
  s3.on(ListObjectsV2Command, { Delimiter: '/' }).resolves({
    CommonPrefixes: prefixes.map((Prefix) => ({ Prefix })),
    Contents: keys.map((Key) => ({ Key, Size: 3 })),
    IsTruncated: false,
  });
};

beforeEach(() => {
  s3.reset();
});

describe('Dispatcher.dispatch, a PENDING deletion', () => {
  it('lists its location flat, then its children when it takes more than a page', async () => {
    // Prepare
    children([day(1)]);
    const { subject } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    const [flat, byChild] = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    // The flat listing is a whole page: the first chain's first page.
    expect(flat).toMatchObject({ Bucket: 'lethe-data', Prefix: location, MaxKeys: 1000 });
    expect(flat).not.toHaveProperty('Delimiter');
    expect(byChild).toMatchObject({ Bucket: 'lethe-data', Prefix: location, Delimiter: '/' });
  });

  it('plans one chain per child prefix', async () => {
    // Prepare
    children([day(1), day(2)]);
    const pending = aDeletion({ state: 'PENDING' });
    const { subject, chains } = dispatcher([pending, aDeletion({ chainsTotal: 2 })]);

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin).toHaveBeenCalledExactlyOnceWith(
      pending,
      [
        { chainId: chainIdOf(day(1)), prefix: day(1) },
        { chainId: chainIdOf(day(2)), prefix: day(2) },
      ],
      false,
      expect.objectContaining({ page: expect.objectContaining({ page: 0 }) }),
    );
  });

  it('makes one chain over the location when all of it lists in one page, whatever its child prefixes', async () => {
    // Prepare
    children([day(1), day(2), day(3)], [], true);
    const { subject, chains } = dispatcher(pendingThenRunning({}, 1));

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1);
    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).not.toHaveProperty('Delimiter');
    expect(chains.begin.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(location), prefix: location },
    ]);
  });

  it('takes small child prefixes in runs of about a page, each a key range of the location', async () => {
    // Prepare: 20 children; the first flat page holds 100 keys of each of its first ten.
    const child = (n: number) => `${location}dt=2026-01-${String(n + 1).padStart(2, '0')}/`;
    const prefixes = Array.from({ length: 20 }, (_, n) => child(n));
    s3.on(ListObjectsV2Command).resolves({
      Contents: Array.from({ length: 1000 }, (_, n) => ({
        Key: `${child(Math.floor(n / 100))}part-${n}.json`,
        Size: 3,
      })),
      IsTruncated: true,
      NextContinuationToken: 'more',
    });
    s3.on(ListObjectsV2Command, { Delimiter: '/' }).resolves({
      CommonPrefixes: prefixes.map((Prefix) => ({ Prefix })),
      IsTruncated: false,
    });
    const { subject, chains } = dispatcher(pendingThenRunning({}, 3));

    // Act
    await subject.dispatch(ref);

    // Assess: 80% of a page is 8 children of 100 keys.
    expect(chains.begin.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(child(0)), prefix: location, range: { below: child(8) } },
      {
        chainId: chainIdOf(child(8)),
        prefix: location,
        range: { from: child(8), below: child(16) },
      },
      { chainId: chainIdOf(child(16)), prefix: location, range: { from: child(16) } },
    ]);
  });

  it('makes no chain for a location that lists empty', async () => {
    // Prepare
    s3.on(ListObjectsV2Command).resolves({ IsTruncated: false });
    const { subject, chains } = dispatcher(pendingThenRunning({}, 0));

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin.mock.calls[0]?.[1]).toEqual([]);
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1);
  });

  it('leaves keys directly under the location, beside child prefixes, to the next round', async () => {
    // Prepare
    children([day(1)], [`${location}manifest.json`]);
    const { subject, chains } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(day(1)), prefix: day(1) },
    ]);
  });

  it('makes one chain over the location when it has no child prefixes', async () => {
    // Prepare
    children([], [`${location}a.json`]);
    const { subject, chains } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(location), prefix: location },
    ]);
  });

  it('ignores a child prefix outside the location', async () => {
    // Prepare
    children([day(1), 'streams/acme/logs/10/']);
    const { subject, chains } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(day(1)), prefix: day(1) },
    ]);
  });

  it('starts the round with the number of chains registered', async () => {
    // Prepare
    children([day(1), day(2)]);
    const pending = aDeletion({ state: 'PENDING' });
    const { subject, deletions } = dispatcher([pending, aDeletion({ chainsTotal: 2 })]);

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(pending, 2, false);
  });

  it('sends the first pages of the chains it registered without reading them or the deletion again', async () => {
    // Prepare
    children([day(1), day(2)]);
    const { subject, queue, deletions, chains } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(deletions.get).toHaveBeenCalledOnce();
    expect(chains.list).not.toHaveBeenCalled();
    expect(queue.send.mock.calls[0]?.[0]).toHaveLength(2);
  });

  it("creates the first chain with the page it listed open, hands on that chain's next page and deletes the page itself", async () => {
    // Prepare: the flat page holds one key of the first child and goes on.
    children([day(1), day(2)]);
    const { subject, queue, chains, pages } = dispatcher(pendingThenRunning());

    // Act
    const outcome = await subject.dispatch(ref);

    // Assess
    const firstPage = {
      page: { page: 0, lastKey: `${day(1)}part-0.json`, count: 1, bytes: 3 },
      next: { key: `${day(1)}part-0.json` },
    };
    expect(chains.begin.mock.calls[0]?.[3]).toEqual(firstPage);
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([
      pageMessage({ ...aDeletion(), chainId: chainIdOf(day(1)) }, 1),
      pageMessage({ ...aDeletion(), chainId: chainIdOf(day(2)) }, 0),
    ]);
    expect(pages.deleteListed).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ chainId: chainIdOf(day(1)), lastPage: 0 }),
      // As the chain holds it: with when it was listed.
      { ...firstPage.page, listedAt: expect.any(Number) },
      [{ key: `${day(1)}part-0.json`, size: 3 }],
    );
    expect(outcome).toEqual({
      outcome: 'dispatched',
      firstPage: { outcome: 'deleted', objects: 1, bytes: 3, failures: 0, retriedKeys: 0 },
    });
  });

  it('deletes a location that lists in one page without a message to the workers', async () => {
    // Prepare
    children([day(1), day(2)], [], true);
    const { subject, queue, chains, pages } = dispatcher(pendingThenRunning({}, 1));

    // Act
    await subject.dispatch(ref);

    // Assess: the one chain ends with the page it was created with.
    expect(chains.begin.mock.calls[0]?.[3]).toEqual({
      page: { page: 0, lastKey: `${day(1)}part-0.json`, count: 1, bytes: 3 },
    });
    expect(pages.deleteListed).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ chainId: chainIdOf(location), lastPage: 0, ended: true }),
      expect.objectContaining({ page: 0 }),
      [{ key: `${day(1)}part-0.json`, size: 3 }],
    );
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('leaves the page it listed to a worker when it has no page deleter, after the next page', async () => {
    // Prepare
    children([day(1), day(2)]);
    const { subject, queue } = dispatcher(pendingThenRunning(), [], false, false);

    // Act
    const outcome = await subject.dispatch(ref);

    // Assess
    expect(outcome).toEqual({ outcome: 'dispatched' });
    const first = pageMessage({ ...aDeletion(), chainId: chainIdOf(day(1)) }, 0);
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([
      pageMessage({ ...aDeletion(), chainId: chainIdOf(day(1)) }, 1),
      { ...first, handedOn: true },
      pageMessage({ ...aDeletion(), chainId: chainIdOf(day(2)) }, 0),
    ]);
  });

  it('creates no chain with a page open when the page holds none of its keys', async () => {
    // Prepare: the flat page holds only a key directly under the location, before the children.
    s3.on(ListObjectsV2Command).resolves({
      Contents: [{ Key: `${location}a.json`, Size: 3 }],
      IsTruncated: true,
      NextContinuationToken: 'more',
    });
    s3.on(ListObjectsV2Command, { Delimiter: '/' }).resolves({
      CommonPrefixes: [{ Prefix: day(1) }, { Prefix: day(2) }],
      IsTruncated: false,
    });
    const { subject, queue, chains, pages } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin.mock.calls[0]?.[3]).toBeUndefined();
    expect(pages.deleteListed).not.toHaveBeenCalled();
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([
      pageMessage({ ...aDeletion(), chainId: chainIdOf(day(1)) }, 0),
      pageMessage({ ...aDeletion(), chainId: chainIdOf(day(2)) }, 0),
    ]);
  });

  it('goes straight to verification when the location is empty', async () => {
    // Prepare
    children([]);
    const { subject, finalizer, queue, deletions } = dispatcher(pendingThenRunning({}, 0));

    // Act
    const outcome = await subject.dispatch(ref);

    // Assess
    expect(outcome).toEqual({ outcome: 'empty' });
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(expect.anything(), 0, false);
    expect(finalizer.finalize).toHaveBeenCalledExactlyOnceWith(aDeletion({ chainsTotal: 0 }));
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('is stale when its start lost to another round, and creates nothing chain by chain', async () => {
    // Prepare
    children([day(1)]);
    const { subject, chains, queue, deletions } = dispatcher([
      aDeletion({ state: 'PENDING' }),
      aDeletion({ state: 'RUNNING', round: 2 }),
    ]);
    deletions.start.mockResolvedValue(fenced());

    // Act
    const outcome = await subject.dispatch(ref);

    // Assess
    expect(outcome).toEqual({ outcome: 'stale' });
    expect(chains.register).not.toHaveBeenCalled();
    expect(queue.send).not.toHaveBeenCalled();
  });
});

describe('Dispatcher.dispatch, starting the round', () => {
  it('creates its chains and starts it in one transaction, with nothing read back', async () => {
    // Prepare
    children([day(1), day(2)]);
    const { subject, chains, deletions } = dispatcher(pendingThenRunning());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin).toHaveBeenCalledOnce();
    expect(chains.register).not.toHaveBeenCalled();
    expect(chains.list).not.toHaveBeenCalled();
    expect(deletions.start).toHaveBeenCalledOnce();
  });

  it('goes chain by chain when a chain of the round exists already, and starts the chains there are', async () => {
    // Prepare: an earlier call created two chains on its own and died before starting the round.
    children([day(1), day(2)]);
    const left = aChain({ chainId: chainIdOf(day(3)), prefix: day(3) });
    const { subject, chains, deletions, queue } = dispatcher(pendingThenRunning({}, 2), [
      left,
      aChain({ chainId: chainIdOf(day(1)), prefix: day(1) }),
    ]);

    // Act
    const outcome = await subject.dispatch(ref);

    // Assess: marked, none of this listing's chains added (day 2 is the next round's), the
    // first page not recorded, and every chain starts at page 0.
    expect(outcome).toEqual({ outcome: 'dispatched' });
    expect(deletions.markRegistering).toHaveBeenCalledOnce();
    expect(chains.register).not.toHaveBeenCalled();
    expect(deletions.start).toHaveBeenLastCalledWith(
      expect.anything(),
      2,
      false,
      expect.any(String),
    );
    expect(
      queue.send.mock.calls[0]?.[0]
        .map((message) => (message.type === 'page' ? message.chainId : ''))
        .sort(),
    ).toEqual([chainIdOf(day(1)), chainIdOf(day(3))].sort());
  });

  it("adds none of its own chains to another layout's, which they could overlap", async () => {
    // Prepare: an earlier call, when the location held one page, made one chain over all of
    // it and died; a hundred children have landed since.
    const many = Array.from({ length: 100 }, (_, n) => `${location}dt=2026-${n}/`);
    children(many, [], false);
    const whole = aChain({ chainId: chainIdOf(location), prefix: location });
    const { subject, chains, deletions, queue } = dispatcher(pendingThenRunning({}, 1), [whole]);

    // Act
    await subject.dispatch(ref);

    // Assess: the round runs the chain there is; a chain per child would list its keys again
    expect(chains.register).not.toHaveBeenCalled();
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      1,
      false,
      expect.any(String),
    );
    expect(queue.send.mock.calls.flat(2)).toEqual([pageMessage(whole, 0)]);
  });

  it('goes chain by chain for a round marked as registering, even of a few chains (no transaction)', async () => {
    // Prepare: an earlier call marked the round and died before making a chain
    children([day(1), day(2)]);
    const marked = { registeredRound: 1 };
    const { subject, chains, deletions } = dispatcher(pendingThenRunning(marked, 2));

    // Act
    await subject.dispatch(ref);

    // Assess: no chain exists, so this call's layout is made, chain by chain
    expect(chains.begin).not.toHaveBeenCalled();
    expect(deletions.markRegistering).toHaveBeenCalledOnce();
    expect(chains.register.mock.calls[0]?.[1]).toHaveLength(2);
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      2,
      false,
      expect.any(String),
    );
  });

  it('goes chain by chain when its transaction finds the round marked (its image was older)', async () => {
    // Prepare
    children([day(1), day(2)]);
    const { subject, chains, deletions } = dispatcher(pendingThenRunning({}, 2));
    chains.begin.mockResolvedValueOnce(duplicate());

    // Act
    await subject.dispatch(ref, aDeletion({ state: 'PENDING' }));

    // Assess
    expect(deletions.markRegistering).toHaveBeenCalledOnce();
    expect(chains.register).toHaveBeenCalledOnce();
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      2,
      false,
      expect.any(String),
    );
  });

  it('starts a round it made chain by chain only as the holder of its mark', async () => {
    // Prepare
    const many = Array.from({ length: 100 }, (_, n) => `${location}dt=2026-${n}/`);
    children(many, [], false);
    const { subject, deletions } = dispatcher(pendingThenRunning({}, 100));

    // Act
    await subject.dispatch(ref);

    // Assess: the start names the token the mark was taken with, a new one each call
    const token = deletions.markRegistering.mock.calls[0]?.[1];
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(expect.anything(), 100, false, token);
  });

  it('makes no chain when the mark finds the round started', async () => {
    // Prepare
    const many = Array.from({ length: 100 }, (_, n) => `${location}dt=2026-${n}/`);
    children(many, [], false);
    const { subject, chains, deletions } = dispatcher(pendingThenRunning({}, 3));
    deletions.markRegistering.mockResolvedValueOnce(fenced());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.register).not.toHaveBeenCalled();
    expect(deletions.start).not.toHaveBeenCalled();
  });

  it('adds no chain to a round that a stale image says is pending but has started', async () => {
    // Prepare: the round runs two chains; the image is an old one, and the layout differs now
    children([day(1), day(2), day(3)]);
    const running = aDeletion({ state: 'RUNNING', chainsTotal: 2 });
    const started = [1, 2].map((n) =>
      aChain({ chainId: chainIdOf(day(n)), prefix: day(n), lastPage: 0 }),
    );
    const { subject, chains, deletions, queue } = dispatcher([running], started);
    chains.begin.mockResolvedValueOnce(fenced());

    // Act
    const outcome = await subject.dispatch(ref, aDeletion({ state: 'PENDING', chainsTotal: 0 }));

    // Assess: fenced by the round's start, so nothing registered, started or sent
    expect(outcome).toEqual({ outcome: 'dispatched' });
    expect(chains.register).not.toHaveBeenCalled();
    expect(deletions.start).not.toHaveBeenCalled();
    expect(queue.send.mock.calls.flat(2)).toEqual([]);
  });

  it('starts nothing when registering chain by chain finds the round started', async () => {
    // Prepare
    const many = Array.from({ length: 100 }, (_, n) => `${location}dt=2026-${n}/`);
    children(many, [], false);
    const { subject, chains, deletions } = dispatcher([
      aDeletion({ state: 'PENDING', chainsTotal: 0 }),
      aDeletion({ state: 'RUNNING', chainsTotal: 3 }),
    ]);
    chains.register.mockResolvedValueOnce(fenced());

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.register).toHaveBeenCalledOnce();
    expect(deletions.start).not.toHaveBeenCalled();
  });

  it('goes chain by chain for a round of 100 chains or more (one transaction holds 100 items)', async () => {
    // Prepare
    const many = Array.from({ length: 100 }, (_, n) => `${location}dt=2026-${n}/`);
    children(many, [], false);
    const { subject, chains, deletions } = dispatcher(pendingThenRunning({}, 100));

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(chains.begin).not.toHaveBeenCalled();
    expect(chains.register.mock.calls[0]?.[1]).toHaveLength(100);
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      100,
      false,
      expect.any(String),
    );
  });
});

describe('Dispatcher.dispatch, a bucket that keeps versions', () => {
  /** Versions listed flat take more than a page; by delimiter, they roll up to `prefixes`. */
  const versionChildren = (prefixes: string[]) => {
    s3.on(ListObjectVersionsCommand).resolves({
      Versions: [{ Key: `${prefixes[0]}part-0.json`, VersionId: 'v1', Size: 3 }],
      IsTruncated: true,
      NextKeyMarker: `${prefixes[0]}part-0.json`,
      NextVersionIdMarker: 'v1',
    });
    s3.on(ListObjectVersionsCommand, { Delimiter: '/' }).resolves({
      CommonPrefixes: prefixes.map((Prefix) => ({ Prefix })),
      IsTruncated: false,
    });
  };

  it('plans from versions, and records it, when the deletion is known versioned', async () => {
    // Prepare
    versionChildren([day(1)]);
    const { subject, chains, deletions } = dispatcher(pendingThenRunning({ versioned: true }, 1));

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(
      s3.commandCalls(ListObjectVersionsCommand, { Delimiter: '/' })[0]?.args[0].input,
    ).toMatchObject({ Prefix: location });
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(0);
    expect(chains.begin).toHaveBeenCalledExactlyOnceWith(
      expect.anything(),
      expect.anything(),
      true,
      expect.anything(),
    );
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(expect.anything(), 1, true);
  });

  it('does not ask the bucket about a deletion known versioned', async () => {
    // Prepare
    versionChildren([day(1)]);
    const { subject } = dispatcher(pendingThenRunning({ versioned: true }, 1), [], true);

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(s3.commandCalls(GetBucketVersioningCommand)).toHaveLength(0);
  });

  it('does not ask the bucket when detection is off', async () => {
    // Prepare
    children([day(1)]);
    const { subject, deletions } = dispatcher(pendingThenRunning({}, 1), [], false);

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(s3.commandCalls(GetBucketVersioningCommand)).toHaveLength(0);
    expect(deletions.start).toHaveBeenCalledExactlyOnceWith(expect.anything(), 1, false);
  });

  describe.each<[BucketVersioningStatus | undefined, boolean]>([
    ['Enabled', true],
    ['Suspended', true],
    [undefined, false],
  ])('when detection finds versioning %s', (status, versioned) => {
    it(`starts the round ${versioned ? 'versioned' : 'plain'}`, async () => {
      // Prepare
      s3.on(GetBucketVersioningCommand).resolves(status ? { Status: status } : {});
      children([day(1)]);
      versionChildren([day(1)]);
      const { subject, deletions } = dispatcher(pendingThenRunning({}, 1), [], true);

      // Act
      await subject.dispatch(ref);

      // Assess
      expect(s3.commandCalls(GetBucketVersioningCommand)[0]?.args[0].input).toEqual({
        Bucket: 'lethe-data',
      });
      expect(deletions.start).toHaveBeenCalledExactlyOnceWith(expect.anything(), 1, versioned);
    });
  });
});

describe('Dispatcher.dispatch, the deletion as its stream record showed it', () => {
  it('takes a PENDING image of the round as it is, reading nothing before the start', async () => {
    // Prepare
    children([day(1), day(2)]);
    const image = aDeletion({ state: 'PENDING' });
    const { subject, deletions, chains } = dispatcher([aDeletion({ state: 'RUNNING' })]);

    // Act
    const outcome = await subject.dispatch(ref, image);

    // Assess
    expect(outcome).toMatchObject({ outcome: 'dispatched' });
    expect(deletions.get).not.toHaveBeenCalled();
    expect(chains.begin.mock.calls[0]?.[0]).toBe(image);
  });

  it('reads the deletion when the round started meanwhile (the image is stale), and sends what was not sent', async () => {
    // Prepare: another call started the round; its chain never started.
    children([day(1)]);
    const { subject, deletions, queue } = dispatcher(
      [aDeletion({ chainsTotal: 1 })],
      [aChain({ chainId: chainIdOf(day(1)), prefix: day(1), lastPage: -1 })],
    );
    deletions.start.mockResolvedValue(fenced());

    // Act
    const outcome = await subject.dispatch(ref, aDeletion({ state: 'PENDING' }));

    // Assess
    expect(outcome).toEqual({ outcome: 'dispatched' });
    expect(deletions.get).toHaveBeenCalledOnce();
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([
      pageMessage(aChain({ chainId: chainIdOf(day(1)) }), 0),
    ]);
  });

  it.each<[string, DeletionRecord]>([
    ['of another round', aDeletion({ state: 'PENDING', round: 2 })],
    ['that is not PENDING', aDeletion({ state: 'RUNNING' })],
  ])('reads the deletion first for an image %s', async (_, image) => {
    // Prepare
    const { subject, deletions } = dispatcher([aDeletion({ state: 'COMPLETED' })]);

    // Act
    const outcome = await subject.dispatch(ref, image);

    // Assess
    expect(outcome).toEqual({ outcome: 'stale' });
    expect(deletions.get).toHaveBeenCalledOnce();
    expect(s3.calls()).toHaveLength(0);
  });
});

describe('Dispatcher.dispatch, a deletion that is not PENDING', () => {
  it.each<[string, DeletionRecord | undefined]>([
    ['a record of an older round', aDeletion({ state: 'PENDING', round: 2 })],
    ['a deletion that is gone', undefined],
    ['a COMPLETED deletion', aDeletion({ state: 'COMPLETED' })],
    ['a FAILED deletion', aDeletion({ state: 'FAILED' })],
  ])('ignores %s', async (_, deletion) => {
    // Prepare
    const { subject, chains, queue } = dispatcher([deletion]);

    // Act
    const outcome = await subject.dispatch(ref);

    // Assess
    expect(outcome).toEqual({ outcome: 'stale' });
    expect(s3.calls()).toHaveLength(0);
    expect(chains.begin).not.toHaveBeenCalled();
    expect(chains.register).not.toHaveBeenCalled();
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('on a repeat, starts only the chains that never started', async () => {
    // Prepare
    const { subject, queue } = dispatcher(
      [aDeletion({ chainsTotal: 3 })],
      [
        aChain({ chainId: 'a'.repeat(20), lastPage: 3 }),
        aChain({ chainId: 'b'.repeat(20), lastPage: -1 }),
        aChain({ chainId: 'c'.repeat(20), lastPage: 0, ended: true }),
      ],
    );

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([
      pageMessage(aChain({ chainId: 'b'.repeat(20) }), 0),
    ]);
  });

  it('on a repeat, sends again a first page that was listed to start the round and is still open', async () => {
    // Prepare: the call that started the round stopped before it deleted the page it listed.
    const page = { page: 0, lastKey: `${day(1)}part-0.json`, count: 1, bytes: 3 };
    const opened = aChain({ chainId: 'a'.repeat(20), lastPage: 0, open: { '0': page } });
    const counted = aChain({ chainId: 'b'.repeat(20), lastPage: 0, open: {} });
    const { subject, queue } = dispatcher([aDeletion({ chainsTotal: 2 })], [opened, counted]);

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([pageMessage(opened, 0)]);
  });

  it('on a repeat, sends again an open first page whose next page a worker has listed since', async () => {
    // Prepare: the call that started the round sent page 1, which a worker listed, then stopped
    // before it deleted page 0: page 0 is open with the chain past it.
    const page = { page: 0, lastKey: `${day(1)}part-0.json`, count: 1, bytes: 3 };
    const next = { page: 1, lastKey: `${day(1)}part-9.json`, count: 1, bytes: 3 };
    const opened = aChain({ lastPage: 1, open: { '0': page, '1': next } });
    const { subject, queue } = dispatcher([aDeletion({ chainsTotal: 1 })], [opened]);

    // Act
    await subject.dispatch(ref);

    // Assess: page 0 again, marked handed on (page 1 is not sent twice)
    expect(queue.send).toHaveBeenCalledExactlyOnceWith([
      { ...pageMessage(opened, 0), handedOn: true },
    ]);
  });

  it('on a repeat, plans nothing again', async () => {
    // Prepare
    const { subject, chains, deletions } = dispatcher([aDeletion({ chainsTotal: 1 })], [aChain()]);

    // Act
    await subject.dispatch(ref);

    // Assess
    expect(s3.calls()).toHaveLength(0);
    expect(chains.begin).not.toHaveBeenCalled();
    expect(chains.register).not.toHaveBeenCalled();
    expect(deletions.start).not.toHaveBeenCalled();
  });
});
