import type { OffboardingView } from '../core/index.ts';
import type { LetheClient } from './client.ts';
import { isDue } from './countdown.ts';
import { offboardingHasEnded, offboardingProgressParts } from './offboarding-format.ts';
import { renderBar } from './progress.ts';
import { type Output, StatusLine } from './status-line.ts';
import { isPassing, untilAborted } from './wait.ts';

/** Ctrl-C while waiting: the offboarding goes on, as `view` (the last one read) shows it. */
export class OffboardingWaitInterrupted extends Error {
  override readonly name = 'OffboardingWaitInterrupted';
  constructor(readonly view: OffboardingView) {
    super(`stopped waiting for the offboarding of tenant ${view.tenant}`);
  }
}

/** What an OffboardingReporter needs: where to write, and the clocks. */
export interface OffboardingReporterOptions {
  readonly output: Output;
  /** Milliseconds since some fixed point. */
  readonly now: () => number;
  /** Milliseconds since the epoch, for the countdown to a SCHEDULED offboarding. */
  readonly wallNow: () => number;
  /** Least time between two lines when the output is not a TTY. @default 5000 */
  readonly plainIntervalMs?: number;
}

/**
 * Shows where an offboarding stands: redrawn in place on a TTY, a line now and then elsewhere
 * (at every change of state, and once a SCHEDULED one comes due). The final line stays.
 */
export class OffboardingReporter {
  readonly #line: StatusLine;
  readonly #now: () => number;
  readonly #wallNow: () => number;
  #tick = 0;

  constructor(options: OffboardingReporterOptions) {
    this.#line = new StatusLine(options.output, options.plainIntervalMs);
    this.#now = options.now;
    this.#wallNow = options.wallNow;
  }

  /** Shows the offboarding as last read. */
  update(view: OffboardingView): void {
    const at = this.#now();
    const wallNow = this.#wallNow();
    const parts = offboardingProgressParts(view, wallNow);
    const phase =
      view.state === 'SCHEDULED' && isDue(view.executeAfter, wallNow)
        ? 'SCHEDULED, due'
        : view.state;
    if (!this.#line.isTTY) {
      this.#line.show(phase, at, parts.join(', '));
    } else if (offboardingHasEnded(view)) {
      this.#line.end(parts.join('  '));
    } else if (view.state === 'RUNNING') {
      this.#line.show(phase, at, `${renderBar(undefined, this.#tick++)}  ${parts.join('  ')}`);
    } else {
      this.#line.show(phase, at, parts.join('  '));
    }
  }

  /** Clears a line left drawn, so what follows starts on a clean line. */
  finish(): void {
    this.#line.clear();
  }
}

/** What waiting for an offboarding needs: a client that reads it, where to start, a clock. */
export interface OffboardingWaitOptions {
  readonly client: Pick<LetheClient, 'getOffboarding'>;
  /** The offboarding the DELETE answered. */
  readonly view: OffboardingView;
  readonly intervalMs: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly reporter?: Pick<OffboardingReporter, 'update' | 'finish'> | undefined;
  /** Failed reads in a row (unreachable, 5xx) tolerated before giving up. @default 5 */
  readonly maxFailedReads?: number;
  /** Aborted on Ctrl-C: the wait ends with an OffboardingWaitInterrupted. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Milliseconds since the epoch. With it, a SCHEDULED offboarding is read only every
   * `scheduledReadMs` until its `executeAfter` (the countdown still ticks every interval), as a
   * SCHEDULED deletion is; without it, every interval.
   */
  readonly wallNow?: () => number;
  /** @default 10000 */
  readonly scheduledReadMs?: number;
}

/**
 * Reads the offboarding every interval until it is COMPLETED or CANCELLED, showing its streams,
 * its deletions and what they deleted meanwhile.
 */
export async function waitForOffboarding(
  options: OffboardingWaitOptions,
): Promise<OffboardingView> {
  const last = { view: options.view };
  try {
    return await poll(options, last);
  } catch (error) {
    if (options.signal?.aborted) throw new OffboardingWaitInterrupted(last.view);
    throw error;
  } finally {
    options.reporter?.finish();
  }
}

async function poll(options: OffboardingWaitOptions, last: { view: OffboardingView }) {
  const { client, intervalMs, reporter, signal } = options;
  const maxFailedReads = options.maxFailedReads ?? 5;
  const readEvery = Math.max(1, Math.round((options.scheduledReadMs ?? 10_000) / intervalMs));
  let failedReads = 0;
  let ticks = 0;
  for (;;) {
    const view = last.view;
    reporter?.update(view);
    if (offboardingHasEnded(view)) return view;
    await untilAborted(options.sleep(intervalMs, signal), signal);
    if (waitingOut(view, options.wallNow) && ++ticks % readEvery !== 0) continue;
    try {
      last.view = (await untilAborted(client.getOffboarding(view.tenant, signal), signal)).body;
      failedReads = 0;
    } catch (error) {
      if (signal?.aborted || !isPassing(error) || ++failedReads > maxFailedReads) throw error;
    }
  }
}

/** A SCHEDULED offboarding whose start is still ahead: no need to read it at every tick. */
function waitingOut(view: OffboardingView, wallNow: (() => number) | undefined): boolean {
  return (
    view.state === 'SCHEDULED' && wallNow !== undefined && Date.parse(view.executeAfter) > wallNow()
  );
}

/** Ctrl-C while waiting: the offboarding is not stopped, and this says how to find it again. */
export function offboardingInterruptedMessage(view: OffboardingView): string {
  const lines = [`lethe: the offboarding goes on: follow it with lethe tenants get ${view.tenant}`];
  if (view.state === 'SCHEDULED') lines.push(`cancel it with lethe tenants cancel ${view.tenant}`);
  return `${lines.join('\n')}\n`;
}
