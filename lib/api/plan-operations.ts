import { randomUUID } from 'node:crypto';
import { newPlan, PlanNotFoundError, type PlanRecord, toPlanView } from '../core/index.ts';
import type { PlanStore, StreamStore } from '../store/index.ts';
import { type Operations, planIdOf, type Reply, streamOf, tenantOf } from './request.ts';

export interface PlanOperationsOptions {
  readonly streams: Pick<StreamStore, 'get' | 'refusal'>;
  readonly plans: Pick<PlanStore, 'request' | 'get' | 'totals'>;
  /** What a plan's estimate assumes of the deployment. */
  readonly pageSize: number;
  readonly workerConcurrency: number;
  /** The bucket's key budget (`LETHE_MAX_KEYS_PER_SECOND`): estimates wait for it too. */
  readonly maxKeysPerSecond?: number;
}

/** Plans drafted at most for one request: each lost to the stream changing under it. */
const PLAN_ATTEMPTS = 3;

const planReply = (status: number, plan: PlanRecord, totals: PlanRecord | undefined): Reply => ({
  status,
  body: toPlanView(plan, totals),
  subject: { stream: plan.stream, generation: plan.generation },
});

/** The plan routes: request a dry run of a stream's deletion, and read it. */
export function planOperations({
  streams,
  plans,
  pageSize,
  workerConcurrency,
  maxKeysPerSecond = 0,
}: PlanOperationsOptions) {
  return {
    createPlan: async (request) => {
      const tenant = tenantOf(request);
      const name = streamOf(request);
      // The plan's write holds only while the incarnation read is ACTIVE: a stream ACTIVE again
      // when it is read afresh (created again, or its deletion cancelled meanwhile) is planned
      // (a few times at most); one being deleted is refused.
      let stream = await streams.get(tenant, name);
      let plan: PlanRecord | undefined;
      for (let attempt = 1; !plan; attempt++) {
        // A stream being deleted has its deletion's receipt; there is nothing left to preview.
        if (stream.state !== 'ACTIVE') throw streams.refusal(stream);
        const drafted = newPlan(stream, randomUUID(), new Date(), {
          pageSize,
          workerConcurrency,
          maxKeysPerSecond,
        });
        if ((await plans.request(drafted)).status === 'ok') plan = drafted;
        else {
          // ACTIVE again: created again, or the deletion that fenced this write was cancelled.
          const now = await streams.get(tenant, name);
          if (now.state !== 'ACTIVE' || attempt === PLAN_ATTEMPTS) throw streams.refusal(now);
          stream = now;
        }
      }
      return {
        ...planReply(202, plan, undefined),
        headers: { Location: `/v1/tenants/${tenant}/plans/${plan.planId}` },
      };
    },

    getPlan: async (request) => {
      const tenant = tenantOf(request);
      const planId = planIdOf(request);
      const plan = await plans.get(tenant, planId);
      if (!plan) throw new PlanNotFoundError(tenant, planId);
      // While it runs, its chains hold the counts; a completed plan holds its own.
      const totals = plan.state === 'RUNNING' ? { ...plan, ...(await plans.totals(plan)) } : plan;
      return planReply(200, plan, totals);
    },
  } satisfies Operations<string>;
}
