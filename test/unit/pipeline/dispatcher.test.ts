import { ListObjectsV2Command, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { chainIdOf, Dispatcher } from '../../lib/dispatch.ts';
import type { Finalizer } from '../../lib/finalizer.ts';
import type { ChainRecord, DeletionRecord } from '../../lib/model.ts';
import type { ProgressStore } from '../../lib/progress.ts';
import type { WorkQueue } from '../../lib/work-queue.ts';
import { fake } from '../helpers/fakes.ts';
import { aChain, aDeletion, DELETION_ID } from '../helpers/records.ts';

const s3 = mockClient(S3Client);
const location = 'streams/acme/logs/1/';

function dispatcher(states: DeletionRecord[], chains: ChainRecord[] = []) {
  const registered: ChainRecord[] = [...chains];
  const store = {
    getDeletion: vi.fn<ProgressStore['getDeletion']>(async () => states.shift()),
    registerChains: vi.fn<ProgressStore['registerChains']>(async (_, planned) => {
      for (const { chainId, prefix } of planned) {
        if (!registered.some((chain) => chain.chainId === chainId)) {
          registered.push(aChain({ chainId, prefix }));
        }
      }
    }),
    chains: vi.fn<ProgressStore['chains']>(async function* () {
      yield* registered;
    }),
    startRound: vi.fn<ProgressStore['startRound']>(async () => true),
  };
  const queue = { send: vi.fn<WorkQueue['send']>(async () => {}) };
  const finalizer = { finalize: vi.fn<Finalizer['finalize']>(async () => 'completed') };
  const subject = new Dispatcher({
    store: fake<ProgressStore>(store),
    s3: new S3Client({ region: 'us-east-1' }),
    queue: fake<WorkQueue>(queue),
    finalizer: fake<Finalizer>(finalizer),
    detectVersioning: false,
  });
  return { subject, store, queue, finalizer };
}

const ref = { tenant: 'acme', deletionId: DELETION_ID, round: 1 };

describe('Dispatcher', () => {
  beforeEach(() => s3.reset());

  it('plans one chain per child prefix and starts each with page 0', async () => {
    s3.on(ListObjectsV2Command).resolves({
      CommonPrefixes: [
        { Prefix: `${location}dt=2026-01-01/` },
        { Prefix: `${location}dt=2026-01-02/` },
      ],
      Contents: [{ Key: `${location}manifest.json`, Size: 3 }],
      IsTruncated: false,
    });
    const { subject, store, queue } = dispatcher([
      aDeletion({ state: 'PENDING' }),
      aDeletion({ state: 'RUNNING', chainsTotal: 2 }),
    ]);

    const outcome = await subject.dispatch(ref);

    expect(outcome).toBe('dispatched');
    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input).toMatchObject({
      Prefix: location,
      Delimiter: '/',
    });
    expect(store.registerChains.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(`${location}dt=2026-01-01/`), prefix: `${location}dt=2026-01-01/` },
      { chainId: chainIdOf(`${location}dt=2026-01-02/`), prefix: `${location}dt=2026-01-02/` },
    ]);
    expect(store.startRound).toHaveBeenCalledWith(expect.anything(), 2, false);
    expect(
      queue.send.mock.calls[0]?.[0].map((message) => message.type === 'page' && message.page),
    ).toEqual([0, 0]);
  });

  it('plans from versions, and records it, in a bucket that keeps versions', async () => {
    s3.on(ListObjectVersionsCommand).resolves({
      CommonPrefixes: [{ Prefix: `${location}dt=2026-01-01/` }],
      IsTruncated: false,
    });
    const { subject, store } = dispatcher([
      aDeletion({ state: 'PENDING', versioned: true }),
      aDeletion({ chainsTotal: 1, versioned: true }),
    ]);

    await subject.dispatch(ref);

    expect(s3.commandCalls(ListObjectVersionsCommand)[0]?.args[0].input).toMatchObject({
      Prefix: location,
      Delimiter: '/',
    });
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(0);
    expect(store.startRound).toHaveBeenCalledWith(expect.anything(), 1, true);
  });

  it('makes one chain over the location when it has no child prefixes', async () => {
    s3.on(ListObjectsV2Command).resolves({
      Contents: [{ Key: `${location}a.json`, Size: 3 }],
      IsTruncated: false,
    });
    const { subject, store } = dispatcher([aDeletion({ state: 'PENDING' }), aDeletion()]);

    await subject.dispatch(ref);

    expect(store.registerChains.mock.calls[0]?.[1]).toEqual([
      { chainId: chainIdOf(location), prefix: location },
    ]);
  });

  it('goes straight to verification when the location is empty', async () => {
    s3.on(ListObjectsV2Command).resolves({ IsTruncated: false });
    const { subject, finalizer, queue } = dispatcher([
      aDeletion({ state: 'PENDING' }),
      aDeletion({ chainsTotal: 0 }),
    ]);

    expect(await subject.dispatch(ref)).toBe('empty');
    expect(finalizer.finalize).toHaveBeenCalledTimes(1);
    expect(queue.send).not.toHaveBeenCalled();
  });

  it('ignores a record of an older round', async () => {
    const { subject, store } = dispatcher([aDeletion({ state: 'PENDING', round: 2 })]);

    expect(await subject.dispatch(ref)).toBe('stale');
    expect(s3.calls()).toHaveLength(0);
    expect(store.registerChains).not.toHaveBeenCalled();
  });

  it('on a repeat, starts only the chains that never started', async () => {
    const { subject, queue } = dispatcher(
      [aDeletion({ chainsTotal: 2 })],
      [
        aChain({ chainId: 'a'.repeat(20), lastPage: 3 }),
        aChain({ chainId: 'b'.repeat(20), lastPage: -1 }),
      ],
    );

    await subject.dispatch(ref);

    expect(s3.calls()).toHaveLength(0);
    expect(queue.send.mock.calls[0]?.[0]).toEqual([
      expect.objectContaining({ type: 'page', chainId: 'b'.repeat(20), page: 0 }),
    ]);
  });
});
