import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  hasIngestInFlight,
  StreamDeletingError,
  StreamNotFoundError,
} from '../../../lib/core/index.ts';
import type { StreamStore } from '../../../lib/store/index.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

/** The stream item's rules, against the emulator's DynamoDB (not a mock of it). */
describe.skipIf(process.env.LETHE_TEST_API_URL)('StreamStore over DynamoDB', () => {
  let target: TestTarget;
  let stores: ReturnType<typeof storesOf>;
  let streams: StreamStore;
  const tenant = () => `t${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
    streams = stores.streams;
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('creates a new name at generation 1 under <root>/<tenant>/<stream>/1/', async () => {
    const name = tenant();

    const { created, stream } = await streams.create(name, 'logs');

    expect(created).toBe(true);
    expect(stream).toMatchObject({
      state: 'ACTIVE',
      generation: 1,
      prefix: `streams/${name}/logs/1/`,
    });
  });

  it('answers an ACTIVE name as it is, created false', async () => {
    const name = tenant();
    const first = await streams.create(name, 'logs');

    const again = await streams.create(name, 'logs');

    expect(again).toEqual({ created: false, stream: first.stream });
  });

  it('lets exactly one of many concurrent creates make the incarnation', async () => {
    const name = tenant();

    const results = await Promise.all(
      Array.from({ length: 8 }, () => streams.create(name, 'logs')),
    );

    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.stream.generation))).toEqual(new Set([1]));
  });

  it('refuses to create or ingest while a deletion runs, naming it, with Retry-After', async () => {
    const name = tenant();
    await streams.create(name, 'logs');
    const { deletion } = await stores.deletions.request(name, 'logs');

    // Both at once, each settled (a rejection left unawaited while the other is awaited is an
    // unhandled rejection).
    const [create, ingest] = await Promise.allSettled([
      streams.create(name, 'logs'),
      streams.admitIngest(name, 'logs'),
    ]);

    expect(create.status === 'rejected' && create.reason).toBeInstanceOf(StreamDeletingError);
    expect(ingest.status === 'rejected' && ingest.reason).toMatchObject({
      code: 'StreamDeleting',
      headers: { 'Retry-After': '30' },
      message: expect.stringContaining(name),
    });
    expect((await streams.get(name, 'logs')).deletionId).toBe(deletion.deletionId);
  });

  it('re-creates a freed name at the next generation, under a new prefix', async () => {
    const name = tenant();
    await streams.create(name, 'logs');
    const { deletion } = await stores.deletions.request(name, 'logs');
    await stores.deletions.start(deletion, 0, false);
    const running = { ...deletion, state: 'RUNNING' as const };
    expect((await stores.deletions.complete(running)).status).toBe('ok');

    const { created, stream } = await streams.create(name, 'logs');

    expect(created).toBe(true);
    expect(stream).toMatchObject({ generation: 2, prefix: `streams/${name}/logs/2/` });
  });

  it('admits ingests into an ACTIVE stream and counts them in flight until released', async () => {
    const name = tenant();
    await streams.create(name, 'logs');

    const admitted = await streams.admitIngest(name, 'logs');
    const during = await streams.get(name, 'logs');
    await streams.releaseIngest(admitted);
    const after = await streams.get(name, 'logs');

    expect(during.ingestsInFlight).toEqual(new Set([admitted.ingestId]));
    expect(after.ingestsInFlight).toBeUndefined();
  });

  it('releases an ingest once, however often the release is sent (an SDK retry after a lost answer)', async () => {
    // Prepare: two ingests in flight
    const name = tenant();
    await streams.create(name, 'logs');
    const first = await streams.admitIngest(name, 'logs');
    const second = await streams.admitIngest(name, 'logs');

    // Act: the first ingest's release arrives twice
    await streams.releaseIngest(first);
    await streams.releaseIngest(first);

    // Assess: the second is still in flight (a count read 0 here), and a deletion waits for it
    expect((await streams.get(name, 'logs')).ingestsInFlight).toEqual(new Set([second.ingestId]));
    await streams.releaseIngest(second);
    await streams.releaseIngest(second);
    expect((await streams.get(name, 'logs')).ingestsInFlight).toBeUndefined();
  });

  it('takes an ingest whose write failed out of flight, and marks the stream as waited for', async () => {
    // Prepare: two ingests in flight
    const name = tenant();
    await streams.create(name, 'logs');
    const failed = await streams.admitIngest(name, 'logs');
    const other = await streams.admitIngest(name, 'logs');

    // Act: the first's write failed; its abandon arrives twice (an SDK retry)
    await streams.abandonIngest(failed);
    await streams.abandonIngest(failed);
    await streams.releaseIngest(other);

    // Assess: no id is left, and the mark (its admission) says one may still be written
    const after = await streams.get(name, 'logs');
    expect(after.ingestsInFlight).toBeUndefined();
    expect(after.abandonedIngestAt).toBe(failed.lastIngestAt);
    expect(hasIngestInFlight(after)).toBe(true);
  });

  it('refuses an ingest into a stream that does not exist', async () => {
    await expect(streams.admitIngest(tenant(), 'nope')).rejects.toBeInstanceOf(StreamNotFoundError);
  });

  it("pages through a tenant's streams with a nextToken, and refuses a forged one", async () => {
    const name = tenant();
    for (const stream of ['a', 'b', 'c']) await streams.create(name, stream);

    const first = await streams.list(name, 2);
    const second = await streams.list(name, 2, first.nextToken);

    expect([...first.streams, ...second.streams].map((stream) => stream.stream)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(second.nextToken).toBeUndefined();
    const forged = Buffer.from(JSON.stringify({ pk: 'TENANT#other', sk: 'STREAM#a' })).toString(
      'base64url',
    );
    await expect(streams.list(name, 2, forged)).rejects.toMatchObject({ code: 'InvalidNextToken' });
  });
});
