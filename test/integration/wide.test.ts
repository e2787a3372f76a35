import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clients } from '#lib/support/index.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * A stream of many small partitions: its chains take runs of partitions (key ranges of the
 * location) instead of one partition each, and still delete every key exactly once, keys
 * directly under the location included, and nothing beside it.
 */
describe('deleting a stream of many small partitions', () => {
  let target: TestTarget;
  let api: ApiClient;
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
});
