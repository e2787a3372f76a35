import { randomUUID } from 'node:crypto';
import { newPlan, PlanNotFoundError, type PlanRecord, toPlanView } from '../core/index.ts';
import type { PlanStore, StreamStore } from '../store/index.ts';
import { RETRY, retry } from '../support/index.ts';
import { type Operations, planIdOf, type Reply, streamOf, tenantOf } from './request.ts';

export interface PlanOperationsOptions {
  readonly streams: Pick<StreamStore, 'get' | 'refusal'>;
  readonly plans: Pick<PlanStore, 'request' | 'get' | 'totals'>;
  /** What a plan's estimate assumes of the deployment. */
  readonly pageSize: number;
  readonly workerConcurrency: number;
}

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
}: PlanOperationsOptions) {
  return {
    createPlan: async (request) => {
      const tenant = tenantOf(request);
      const name = streamOf(request);
      // The plan's write holds only while the incarnation read is ACTIVE: one deleted and
      // created again meanwhile is read afresh, one being deleted is refused.
      const plan = await retry<PlanRecord>(RETRY.contention, async () => {
        const stream = await streams.get(tenant, name);
        // A stream being deleted has its deletion's receipt; there is nothing left to preview.
        if (stream.state !== 'ACTIVE') throw streams.refusal(stream);
        const drafted = newPlan(stream, randomUUID(), new Date(), { pageSize, workerConcurrency });
        const requested = await plans.request(drafted);
        if (requested.status === 'ok') return { done: true, value: drafted };
        return { done: false, why: `plan of ${tenant}/${name} lost a race` };
      });
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
