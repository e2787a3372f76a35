import type { Context } from 'aws-lambda';
import type { DeletionRecord } from '../core/index.ts';
import {
  count,
  keysOf,
  loggedDeletionEvents,
  sample,
  type Telemetry,
} from '../observability/index.ts';
import {
  createPipeline,
  eachInIsolation,
  type Offboarder,
  type PlanSweeper,
  type RetentionRunner,
  type Sweeper,
  type SweepFailed,
} from '../pipeline/index.ts';
import type { OffboardingStore } from '../store/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env } from './boot.ts';
import { SweepFailures } from './sweep-failures.ts';

/** What the sweeper looks after beside deletions. */
export interface SweeperParts {
  readonly retention?: Pick<RetentionRunner, 'run'>;
  readonly offboarding?: {
    offboardings: Pick<OffboardingStore, 'underWay'>;
    offboarder: Pick<Offboarder, 'refresh'>;
  };
  readonly plans?: Pick<PlanSweeper, 'sweep'>;
}

/**
 * Offboardings first: a cancelled one's deletions are cancelled before any is begun. Each is
 * looked at in isolation, and a tenant whose offboarding could not be (every tenant, when they
 * could not be read) has no due deletion begun by this sweep: that offboarding may have been
 * cancelled and its deletions not yet, and beginning one would delete what the tenant kept.
 */
async function refreshOffboardings(
  { offboardings, offboarder }: NonNullable<SweeperParts['offboarding']>,
  failed: SweepFailed,
) {
  const outcomes: Record<string, number> = {};
  const held = new Set<string>();
  let open = 0;
  const { listed } = await eachInIsolation(
    () => offboardings.underWay(),
    {
      list: 'list offboardings',
      item: 'refresh offboarding',
      keys: ({ tenant, offboardingId }) => ({ tenant, offboardingId }),
    },
    failed,
    async (record) => {
      try {
        const outcome = await offboarder.refresh(record);
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        if (outcome === 'running') open++;
      } catch (error) {
        held.add(record.tenant);
        outcomes.failed = (outcomes.failed ?? 0) + 1;
        // Still under way, as far as this sweep knows.
        if (record.state === 'RUNNING') open++;
        throw error;
      }
    },
  );
  // A count of a listing that broke off would say fewer than there are: none is sent.
  if (listed) sample('openOffboardings', open);
  if (outcomes.completed) count('offboardingsCompleted', outcomes.completed);
  const holds = (due: DeletionRecord) => !listed || held.has(due.tenant);
  return { outcomes, holds };
}

/**
 * Sweeper: scheduled; starts due deletions, resumes stalled ones, runs the day's retention and
 * takes on plans that stopped counting. It also reports the age of the oldest open deletion,
 * measured before the sweep so that a sweeper that keeps failing still reports it.
 *
 * Each item (an offboarding, a due or stale deletion, a retention stream, a plan) and each part
 * is handled in isolation: one that throws is logged (`sweep item failed`, with its keys and
 * the error) and counted (`SweepItemsFailed`), and the sweep goes on. Once everything else is
 * done, a sweep that had failures fails the invocation, so the sweeper's alarm sees it.
 */
export const sweeperHandler =
  (
    sweeper: Pick<Sweeper, 'sweep' | 'oldestOpen' | 'scheduled'>,
    telemetry: Telemetry,
    { retention, offboarding, plans }: SweeperParts = {},
  ) =>
  async (_event?: unknown, context?: Context) =>
    telemetry.invocation(context, {}, async () => {
      const failures = new SweepFailures(telemetry.logger);
      const { failed } = failures;
      const looked = await failures.part('find the oldest open deletion', async () => {
        const found = await sweeper.oldestOpen();
        sample('oldestDeletionAge', found?.ageSeconds ?? 0);
        return found;
      });
      const oldest = looked?.value;
      const refreshed = offboarding ? await refreshOffboardings(offboarding, failed) : undefined;
      const offboardings = refreshed?.outcomes ?? {};
      const swept = await failures.part('sweep deletions', () =>
        sweeper.sweep({ failed, ...(refreshed ? { holds: refreshed.holds } : {}) }),
      );
      const report = swept?.value;
      const counted = await failures.part('count scheduled deletions', () => sweeper.scheduled());
      const scheduled = counted?.value;
      if (scheduled !== undefined) sample('scheduledDeletions', scheduled);
      // The day's retention runs, once a day per stream, after the deletions are looked after.
      const ran =
        retention && (await failures.part('sweep retention', () => retention.run({ failed })));
      const retained = ran?.value;
      if (retained) {
        sample('retentionPolicies', retained.policies);
        if (retained.requested) count('retentionDeletions', retained.requested);
      }
      // Plans last: a preview waits for the deletions.
      const looks = plans && (await failures.part('sweep plans', () => plans.sweep({ failed })));
      const planned = looks?.value;
      if (planned?.resumed) count('plansResumed', planned.resumed);
      if (planned?.failed) count('plansFailed', planned.failed);
      telemetry.logger.info('swept', {
        ...report,
        ...(scheduled !== undefined ? { scheduled } : {}),
        ...(retained ? { retention: retained } : {}),
        ...(planned ? { plans: planned } : {}),
        ...(Object.keys(offboardings).length > 0 ? { offboardings } : {}),
        ...(oldest
          ? {
              oldest: {
                ...keysOf(oldest.deletion),
                state: oldest.deletion.state,
                ageSeconds: oldest.ageSeconds,
              },
            }
          : {}),
        ...(failures.count > 0 ? { itemsFailed: failures.count } : {}),
      });
      return failures.settle(report);
    });

export function createSweeperHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('sweeper', env, clients);
  const { sweeper, retention, offboardings, offboarder, planSweeper } = createPipeline({
    config,
    clients: sdk,
    events: loggedDeletionEvents,
  });
  return sweeperHandler(sweeper, telemetry, {
    retention,
    offboarding: { offboardings, offboarder },
    plans: planSweeper,
  });
}
