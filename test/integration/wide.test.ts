import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clients } from '#lib/support/index.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { storesOf } from '../helpers/stores.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * A stream of many small partitions: its chains take runs of partitions (key ranges of the
 * location) instead of one partition each, and still delete every key exactly once, keys
 * directly under the location included, and nothing beside it.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)(
  'deleting a stream of many small partitions',
  () => {
    let target: TestTarget;
    let api: ApiClient;
    let stores: ReturnType<typeof storesOf>;
    const deletes: string[][] = [];
    const watch = (clients: Clients) => {
      clients.s3Deletes.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'DeleteObjectsCommand') {
            const input = args.input as { Delete?: { Objects?: Array<{ Key?: string }> } };
            deletes.push((input.Delete?.Objects ?? []).map((entry) => entry.Key ?? ''));
          }
          return next(args);
        },
        { step: 'initialize', name: 'watchDeletes' },
      );
      return clients;
    };

    beforeAll(async () => {
      // Pages of 20: the first page holds five whole partitions of four keys, so a chain takes
      // a run of four partitions (80% of a page) and 30 partitions make 8 chains, not 30.
      target = await startTarget({ settings: { LETHE_PAGE_SIZE: '20' }, wrapClients: watch });
      if (!target.local) throw new Error('needs the in-process local stack');
      stores = storesOf(target.local);
      api = apiClient(target.baseUrl);
    });
    afterAll(async () => {
      await target?.stop();
    });

    it('deletes in runs of partitions, every key exactly once, with an exact receipt', async () => {
      // Arrange: 120 objects in 30 partitions, keys directly under the location (one sorting
      // between two partitions), and a sibling stream whose location shares the name's start.
      const created = await api.create('wide', 'logs');
      const { bucket, prefix } = parseLocation(String(created.body.location));
      const sibling = parseLocation(String((await api.create('wide', 'logs2')).body.location));
      await seedObjects(target.s3, bucket, [
        ...partitionedObjects(prefix, 120, 30),
        { key: `${prefix}dt=2026-01-05.json`, body: 'between' },
        { key: `${prefix}_SUCCESS`, body: '' },
        ...partitionedObjects(sibling.prefix, 8, 4),
      ]);
      const before = await listAll(target.s3, bucket, prefix);
      const siblingBefore = await listAll(target.s3, bucket, sibling.prefix);

      // Act
      const reply = await api.delete('wide', 'logs');
      expect(reply.status).toBe(202);
      const receipt = await waitFor('the deletion to complete', async () => {
        const { body } = await api.deletion('wide', String(reply.body.deletionId));
        return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
      });

      // Assess
      expect(receipt).toMatchObject({
        state: 'COMPLETED',
        objectsDeleted: before.size,
        bytesDeleted: [...before.values()].reduce((sum, size) => sum + size, 0),
      });
      expect((await listAll(target.s3, bucket, prefix)).size).toBe(0);
      expect(await listAll(target.s3, bucket, sibling.prefix)).toEqual(siblingBefore);
      const deleted = deletes.flat();
      expect(new Set(deleted).size).toBe(deleted.length);
      expect(deleted.every((key) => key.startsWith(prefix))).toBe(true);
      // A chain per partition would have sent at least 30 DeleteObjects.
      expect(deletes.length).toBeGreaterThanOrEqual(8);
      expect(deletes.length).toBeLessThanOrEqual(12);
    }, 180_000);

    it('splits a run that holds more than its first page suggested, and still deletes exactly', async () => {
      // Arrange: ten partitions of 2 keys (the first page: runs of 8 partitions), then ten of 30.
      const created = await api.create('wide', 'skewed');
      const { bucket, prefix } = parseLocation(String(created.body.location));
      const day = (n: number) => `${prefix}dt=2026-02-${String(n + 1).padStart(2, '0')}/`;
      const objects = Array.from({ length: 20 }, (_, n) =>
        Array.from({ length: n < 10 ? 2 : 30 }, (_, k) => ({ key: `${day(n)}k${k}`, body: 'x' })),
      ).flat();
      await seedObjects(target.s3, bucket, objects);

      // Act
      const reply = await api.delete('wide', 'skewed');
      const receipt = await waitFor('the deletion to complete', async () => {
        const { body } = await api.deletion('wide', String(reply.body.deletionId));
        return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
      });

      // Assess: the runs of 8 partitions starting at days 1, 9 and 17 split on their full pages.
      expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: objects.length });
      expect((await listAll(target.s3, bucket, prefix)).size).toBe(0);
      const deletion = await stores.deletions.get('wide', String(reply.body.deletionId));
      if (!deletion) throw new Error('no deletion record');
      const chains = [];
      for await (const chain of stores.chains.list(deletion)) chains.push(chain);
      expect(chains.length).toBeGreaterThan(3);
      expect(deletion.chainsTotal).toBe(chains.length);
      const starts = chains.map((chain) => chain.range?.from).filter(Boolean);
      expect(starts.some((from) => from !== day(8) && from !== day(16))).toBe(true);
    }, 180_000);
  },
);
