import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, OPEN_DELETIONS } from '../../lib/model.ts';
import { ProgressStore } from '../../lib/progress.ts';
import { documentClient } from '../../lib/table.ts';
import { aDeletion } from '../helpers/records.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/** The progress store's conditions, against the emulator's DynamoDB (not a mock of it). */
describe.skipIf(process.env.LETHE_TEST_API_URL)('ProgressStore over DynamoDB', () => {
  let target: TestTarget;
  let store: ProgressStore;
  let put: (item: Record<string, unknown>) => Promise<unknown>;

  beforeAll(async () => {
    target = await startTarget();
    const local = target.local;
    if (!local) throw new Error('needs the in-process local stack');
    const client = documentClient(local.clients.dynamodb);
    const TableName = local.resources.tableName;
    store = new ProgressStore({ tableName: TableName, client });
    put = (Item) => client.send(new PutCommand({ TableName, Item }));
  });

  afterAll(async () => {
    await target?.stop();
  });

  async function aReadyDeletion(deletionId: string) {
    const deletion = aDeletion({ deletionId, chainsTotal: 3, chainsSettled: 3 });
    await put({
      ...deletion,
      ...keys.deletion(deletion.tenant, deletionId),
      sweepPk: OPEN_DELETIONS,
      sweepSk: deletion.updatedAt,
    });
    return deletion;
  }

  it('lets exactly one of many concurrent workers claim a round for verification', async () => {
    const deletion = await aReadyDeletion('claim-race');

    const claims = await Promise.all(
      Array.from({ length: 8 }, () => store.claimVerification(deletion)),
    );

    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.claimVerification(deletion)).toBe(false);
  });

  it('claims each round once, and a round that is not ready not at all', async () => {
    const deletion = await aReadyDeletion('claim-rounds');
    expect(await store.claimVerification(deletion)).toBe(true);
    expect(await store.nextRound(deletion)).toBe('recorded');

    // Round 2: PENDING until dispatched, then RUNNING with two chains, none settled.
    const pending = { ...deletion, state: 'PENDING' as const, round: 2 };
    expect(await store.claimVerification(pending)).toBe(false);
    await store.registerChains(pending, [
      { chainId: 'a', prefix: `${deletion.prefix}a/` },
      { chainId: 'b', prefix: `${deletion.prefix}b/` },
    ]);
    expect(await store.startRound(pending, 2)).toBe(true);
    const running = { ...pending, state: 'RUNNING' as const };
    expect(await store.claimVerification(running)).toBe(false);

    for await (const chain of store.chains(running)) {
      expect(await store.recordListing(running, chain, 0, undefined, true)).toMatchObject({
        outcome: 'recorded',
      });
    }
    const settled = [];
    for await (const chain of store.chains(running)) {
      settled.push(await store.settleChain(running, chain));
    }
    expect(settled).toEqual(['recorded', 'recorded']);
    expect(await store.claimVerification(running)).toBe(true);
    expect(await store.claimVerification(running)).toBe(false);
  });
});
