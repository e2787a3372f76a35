import type { Context } from 'aws-lambda';
import {
  count,
  keysOf,
  loggedDeletionEvents,
  sample,
  type Telemetry,
} from '../observability/index.ts';
import {
  createPipeline,
  type Offboarder,
  type PlanSweeper,
  type RetentionRunner,
  type Sweeper,
} from '../pipeline/index.ts';
import type { OffboardingStore } from '../store/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env } from './boot.ts';

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
 * Sweeper: scheduled; starts due deletions, resumes stalled ones, runs the day's retention and
 * takes on plans that stopped counting. It also reports the age of the oldest open deletion,
 * measured before the sweep so that a sweeper that keeps failing still reports it.
 */
export const sweeperHandler =
  (
    sweeper: Pick<Sweeper, 'sweep' | 'oldestOpen' | 'scheduled'>,
    telemetry: Telemetry,
    { retention, offboarding, plans }: SweeperParts = {},
  ) =>
  async (_event?: unknown, context?: Context) =>
    telemetry.invocation(context, {}, async () => {
      const oldest = await sweeper.oldestOpen();
      sample('oldestDeletionAge', oldest?.ageSeconds ?? 0);
      // Offboardings first: a cancelled one's deletions are cancelled before any is begun.
      const offboardings: Record<string, number> = {};
      if (offboarding) {
        for await (const record of offboarding.offboardings.underWay()) {
          const outcome = await offboarding.offboarder.refresh(record);
          offboardings[outcome] = (offboardings[outcome] ?? 0) + 1;
        }
        sample('openOffboardings', offboardings.running ?? 0);
        if (offboardings.completed) count('offboardingsCompleted', offboardings.completed);
      }
      const report = await sweeper.sweep();
      const scheduled = await sweeper.scheduled();
      sample('scheduledDeletions', scheduled);
      // The day's retention runs, once a day per stream, after the deletions are looked after.
      const retained = retention ? await retention.run() : undefined;
      if (retained) {
        sample('retentionPolicies', retained.policies);
        if (retained.requested) count('retentionDeletions', retained.requested);
      }
      // Plans last: a preview waits for the deletions.
      const planned = plans ? await plans.sweep() : undefined;
      if (planned?.resumed) count('plansResumed', planned.resumed);
      if (planned?.failed) count('plansFailed', planned.failed);
      telemetry.logger.info('swept', {
        ...report,
        scheduled,
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
      });
      return report;
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
