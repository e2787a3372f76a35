import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, OffboardingStore, Table } from '../../../lib/store/index.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

/** The offboarding item's count of completed deletions, against the emulator's DynamoDB. */
describe.skipIf(process.env.LETHE_TEST_API_URL)('OffboardingStore.countCompleted', () => {
  let target: TestTarget;
  let offboardings: OffboardingStore;
  const tenant = () => `t${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    const client = documentClient(target.local.clients.dynamodb);
    offboardings = new OffboardingStore({
      table: new Table(client, target.local.resources.tableName),
    });
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('counts a linked deletion once, and neither another deletion of the stream nor another offboarding', async () => {
    // Arrange: an offboarding that took two streams in
    const name = tenant();
    const { offboarding } = await offboardings.request(name, 0);
    await offboardings.link(offboarding, 'a', 'deletion-a');
    await offboardings.link(offboarding, 'b', 'deletion-b');

    // Act
    const first = await offboardings.countCompleted(offboarding, 'a', 'deletion-a');
    const repeated = await offboardings.countCompleted(offboarding, 'a', 'deletion-a');
    const otherDeletion = await offboardings.countCompleted(offboarding, 'b', 'deletion-x');
    const unlinked = await offboardings.countCompleted(offboarding, 'c', 'deletion-c');
    const otherOffboarding = await offboardings.countCompleted(
      { offboardingId: randomUUID() },
      'b',
      'deletion-b',
    );
    const afterOne = await offboardings.completedCount(offboarding);
    const second = await offboardings.countCompleted(offboarding, 'b', 'deletion-b');

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
});
