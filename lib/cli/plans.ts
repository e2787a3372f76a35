import type { PlanView } from '../core/index.ts';
import type { ApiResponse, LetheClient } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import type { FollowContext } from './follow.ts';
import { planHasEnded, planProgressParts, planSummary } from './plan-format.ts';
import { renderBar } from './progress.ts';
import { type Output, StatusLine } from './status-line.ts';
import { isPassing, untilAborted } from './wait.ts';

/** Ctrl-C while waiting for a plan: the plan goes on, as `plan` (the last one read) shows it. */
export class PlanWaitInterrupted extends Error {
  override readonly name = 'PlanWaitInterrupted';
  constructor(readonly plan: PlanView) {
    super(`stopped waiting for plan ${plan.planId}`);
  }
}

/** Shows a plan's count as it grows: redrawn in place on a TTY, a line now and then elsewhere. */
export class PlanReporter {
  readonly #line: StatusLine;
  readonly #now: () => number;
  readonly #startedAt: number;
  #tick = 0;

  constructor(options: { output: Output; now: () => number; plainIntervalMs?: number }) {
    this.#line = new StatusLine(options.output, options.plainIntervalMs);
    this.#now = options.now;
    this.#startedAt = options.now();
  }

  /** Shows the plan as last read. */
  update(plan: PlanView): void {
    const at = this.#now();
    const parts = planProgressParts(plan, at - this.#startedAt);
    if (this.#line.isTTY) {
      this.#line.show(plan.state, at, `${renderBar(undefined, this.#tick++)}  ${parts.join('  ')}`);
    } else {
      this.#line.show(plan.state, at, parts.join(', '));
    }
  }

  /** Clears the line on a TTY: the summary on stdout says the rest. */
  finish(): void {
    this.#line.clear();
  }
}

/** What waiting for a plan needs: a client that reads plans, the plan to start from, a clock. */
export interface PlanWaitOptions {
  readonly client: Pick<LetheClient, 'getPlan'>;
  /** The plan the POST answered. */
  readonly plan: PlanView;
  readonly intervalMs: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly reporter?: Pick<PlanReporter, 'update' | 'finish'> | undefined;
  /** Failed reads in a row (unreachable, 5xx) tolerated before giving up. @default 5 */
  readonly maxFailedReads?: number;
  /** Aborted on Ctrl-C: the wait ends with a PlanWaitInterrupted. */
  readonly signal?: AbortSignal | undefined;
}

/** Reads the plan every interval until it is COMPLETED or FAILED, showing its count meanwhile. */
export async function waitForPlan(options: PlanWaitOptions): Promise<PlanView> {
  const last = { plan: options.plan };
  try {
    return await pollPlan(options, last);
  } catch (error) {
    if (options.signal?.aborted) throw new PlanWaitInterrupted(last.plan);
    throw error;
  } finally {
    options.reporter?.finish();
  }
}

async function pollPlan(options: PlanWaitOptions, last: { plan: PlanView }): Promise<PlanView> {
  const { client, intervalMs, reporter, signal } = options;
  const maxFailedReads = options.maxFailedReads ?? 5;
  let failedReads = 0;
  for (;;) {
    const plan = last.plan;
    reporter?.update(plan);
    if (planHasEnded(plan)) return plan;
    await untilAborted(options.sleep(intervalMs, signal), signal);
    try {
      const read = client.getPlan(plan.tenant, plan.planId, signal);
      last.plan = (await untilAborted(read, signal)).body;
      failedReads = 0;
    } catch (error) {
      if (signal?.aborted || !isPassing(error) || ++failedReads > maxFailedReads) throw error;
    }
  }
}

/** Ctrl-C while waiting: the plan is not stopped, and this says how to read it later. */
export function planInterruptedMessage(plan: PlanView): string {
  return `lethe: the plan goes on: follow it with lethe plans get ${plan.tenant} ${plan.planId}\n`;
}

/** Prints a plan (its JSON with `--json`); a FAILED plan exits 1, any other 0. */
export function settlePlan(plan: PlanView, context: Pick<FollowContext, 'json' | 'stdout'>) {
  context.stdout.write(context.json ? `${JSON.stringify(plan)}\n` : planSummary(plan));
  return plan.state === 'FAILED' ? EXIT.unexpected : EXIT.ok;
}

/**
 * `lethe delete --dry-run`: after the 202, waits for the plan to end, its count on stderr, then
 * prints it. Ctrl-C stops waiting (exit 130); the plan goes on.
 */
export async function dryRun(
  accepted: ApiResponse<PlanView>,
  context: FollowContext,
): Promise<ExitCode> {
  const controller = new AbortController();
  const stop = context.interrupts?.(() => controller.abort());
  try {
    const plan = await waitForPlan({
      client: context.client,
      plan: accepted.body,
      intervalMs: context.intervalMs,
      sleep: context.sleep,
      signal: controller.signal,
      reporter: context.json
        ? undefined
        : new PlanReporter({ output: context.stderr, now: context.now }),
    });
    return settlePlan(plan, context);
  } catch (error) {
    if (!(error instanceof PlanWaitInterrupted)) throw error;
    context.stderr.write(planInterruptedMessage(error.plan));
    return EXIT.interrupted;
  } finally {
    stop?.();
  }
}
