import { type Clock, type PlanRecord, planPageMessage } from '../core/index.ts';
import type { PlanStore } from '../store/index.ts';
import { collect } from './dispatcher.ts';
import { eachInIsolation, type SweepFailed } from './isolation.ts';
import type { Planner, PlanSender } from './planner.ts';

export interface PlanSweeperOptions {
  readonly plans: Pick<PlanStore, 'open' | 'claim' | 'chains' | 'fail'>;
  readonly planner: Pick<Planner, 'finalizeIfReady'>;
  readonly queue: PlanSender;
  /** Seconds a plan may count no page before it is taken on again. */
  readonly staleAfterSeconds: number;
  /** Looks at a plan that counted nothing (the first run included) before it is FAILED. */
  readonly maxAttempts: number;
  readonly clock: Clock;
}

export interface PlanSweepReport {
  /** Open plans looked at: started, or last looked at, longer ago than the stale interval. */
  looked: number;
  resumed: number;
  failed: number;
  /** Looks (or the listing) that threw: each was reported, and the sweep went on. */
  errors?: number;
}

/**
 * Takes on plans that stopped counting. A plan stops when a step's delivery failed for good: its
 * start's stream record (it stays PENDING) or a page message (it stays RUNNING, the message in
 * the plans' dead-letter queue). Each stale plan is looked at once per stale interval, with a
 * conditional write (one sweeper of several wins): a plan whose chains counted pages since the
 * last look is left to go on; one that counted none is taken on again from its chains' records,
 * and FAILED (`Stalled`) after as many looks as attempts allowed. Every step it repeats is
 * idempotent: a page counts once, whichever message lists it.
 */
export class PlanSweeper {
  readonly #plans: PlanSweeperOptions['plans'];
  readonly #planner: PlanSweeperOptions['planner'];
  readonly #queue: PlanSender;
  readonly #staleAfterMs: number;
  readonly #maxAttempts: number;
  readonly #clock: Clock;

  constructor(options: PlanSweeperOptions) {
    this.#plans = options.plans;
    this.#planner = options.planner;
    this.#queue = options.queue;
    this.#staleAfterMs = options.staleAfterSeconds * 1000;
    this.#maxAttempts = options.maxAttempts;
    this.#clock = options.clock;
  }

  /** Each plan in isolation: one whose look throws is reported to `failed`, and the next looked at. */
  async sweep({ failed }: { failed?: SweepFailed } = {}): Promise<PlanSweepReport> {
    const report: PlanSweepReport = { looked: 0, resumed: 0, failed: 0 };
    const now = this.#clock.now();
    const { failures } = await eachInIsolation(
      () => this.#plans.open(new Date(now.getTime() - this.#staleAfterMs)),
      {
        list: 'list open plans',
        item: 'look at plan',
        keys: ({ tenant, stream, planId }) => ({ tenant, stream, planId }),
      },
      failed,
      async (seen) => {
        report.looked++;
        const outcome = await this.#look(seen, now);
        if (outcome !== 'moving') report[outcome]++;
      },
    );
    return failures > 0 ? { ...report, errors: failures } : report;
  }

  async #look(seen: PlanRecord, now: Date): Promise<'moving' | 'resumed' | 'failed'> {
    const chains = seen.state === 'RUNNING' ? await collect(this.#plans.chains(seen)) : [];
    const pagesSeen = chains.reduce((sum, chain) => sum + chain.page, 0);
    // A PENDING plan never started: nothing it does moves it but the start.
    const stalled = seen.state === 'PENDING' || pagesSeen === (seen.pagesSeen ?? 0);
    const stalls = stalled ? (seen.stalls ?? 0) + 1 : 0;
    const claim = await this.#plans.claim(seen, { pagesSeen, stalls }, now);
    if (claim.status !== 'ok' || !stalled) return 'moving';
    if (stalls >= this.#maxAttempts) {
      const reason = {
        code: 'Stalled',
        message: `no page counted after ${this.#maxAttempts} attempts; request the plan again once the cause is fixed`,
      };
      const failed = await this.#plans.fail(claim.item, reason, now);
      return failed.status === 'ok' ? 'failed' : 'moving';
    }
    // The claim's own write starts a PENDING plan again, through the table's stream.
    if (seen.state === 'PENDING') return 'resumed';
    const open = chains.filter((chain) => !chain.ended);
    if (open.length === 0) await this.#planner.finalizeIfReady(seen);
    else await this.#queue.send(open.map((chain) => planPageMessage(chain, chain.page)));
    return 'resumed';
  }
}
