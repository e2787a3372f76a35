import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_COUNTS, newPlan, type PlanRecord } from '../../../lib/core/index.ts';
import { collect } from '../../../lib/pipeline/index.ts';
import { PlanStore } from '../../../lib/store/index.ts';
import { storesOf } from '../../helpers/stores.ts';
import { startTarget, type TestTarget } from '../../helpers/target.ts';

/** The sweeper's view of plans (the sweep index, its conditional claim), against the emulator. */
describe.skipIf(process.env.LETHE_TEST_API_URL)('PlanStore for the sweeper', () => {
  let target: TestTarget;
  let stores: ReturnType<typeof storesOf>;
  let plans: PlanStore;
  const tenant = () => `p${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    target = await startTarget();
    if (!target.local) throw new Error('needs the in-process local stack');
    stores = storesOf(target.local);
    plans = new PlanStore({ table: stores.table });
  });
  afterAll(async () => {
    await target?.stop();
  });

  /** A plan of a new stream, requested an hour ago (the table's stream starts it: not here). */
  async function aRequestedPlan(): Promise<PlanRecord> {
    const name = tenant();
    const { stream } = await stores.streams.create(name, 'logs');
    const requested = new Date(Date.now() - 3_600_000);
    const plan = newPlan(stream, randomUUID(), requested, { pageSize: 10, workerConcurrency: 2 });
    expect((await plans.request(plan)).status).toBe('ok');
    return plan;
  }

  const openIds = async (cutoff: Date) => {
    const ids: string[] = [];
    for await (const plan of plans.open(cutoff)) ids.push(plan.planId);
    return ids;
  };

  it('keeps a plan in the index while it is open, by when it was last looked at', async () => {
    // Arrange
    const plan = await aRequestedPlan();
    const started = new Date();

    // Act
    const beforeStart = await openIds(new Date(Date.now() - 60_000));
    await plans.start(plan, 1, false, started);
    const afterStart = await openIds(new Date(Date.now() - 60_000));
    const running = await openIds(new Date(Date.now() + 60_000));
    await plans.complete({ ...plan, state: 'RUNNING' }, NO_COUNTS, 0, new Date());
    const completed = await openIds(new Date(Date.now() + 60_000));

    // Assess
    expect(beforeStart).toContain(plan.planId);
    expect(afterStart).not.toContain(plan.planId);
    expect(running).toContain(plan.planId);
    expect(completed).not.toContain(plan.planId);
  });

  it('lets one claim of a plan as it was seen win, and none of an ended plan', async () => {
    // Arrange
    const plan = await aRequestedPlan();
    const [seen] = (await collect(plans.open(new Date()))).filter(
      (found) => found.planId === plan.planId,
    );
    if (!seen) throw new Error('the plan is not in the sweep index');
    const now = new Date();

    // Act
    const first = await plans.claim(seen, { pagesSeen: 0, stalls: 1 }, now);
    const second = await plans.claim(seen, { pagesSeen: 0, stalls: 1 }, now);
    const claimed = await plans.get(plan.tenant, plan.planId);
    await plans.fail(plan, { code: 'Stalled', message: 'test' }, now);
    const ended = await plans.get(plan.tenant, plan.planId);
    const afterEnd = ended && (await plans.claim(ended, { pagesSeen: 0, stalls: 2 }, now));

    // Assess
    expect([first.status, second.status, afterEnd?.status]).toEqual([
      'ok',
      'duplicate',
      'duplicate',
    ]);
    expect(claimed).toMatchObject({ state: 'PENDING', stalls: 1, updatedAt: now.toISOString() });
    expect(await openIds(new Date(Date.now() + 60_000))).not.toContain(plan.planId);
  });
});
