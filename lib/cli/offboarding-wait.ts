import type { OffboardingView } from '../core/index.ts';
import type { LetheClient } from './client.ts';
import { isDue } from './countdown.ts';
import { offboardingHasEnded, offboardingProgressParts } from './offboarding-format.ts';
import { renderBar } from './progress.ts';
import { type Output, StatusLine } from './status-line.ts';
import { type PollPacing, pollUntilEnded } from './wait.ts';

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
export interface OffboardingWaitOptions extends PollPacing {
  readonly client: Pick<LetheClient, 'getOffboarding'>;
  /** The offboarding the DELETE answered. */
  readonly view: OffboardingView;
  readonly reporter?: Pick<OffboardingReporter, 'update' | 'finish'> | undefined;
}

/**
 * Reads the offboarding every interval until it is COMPLETED or CANCELLED, showing its streams,
 * its deletions and what they deleted meanwhile.
 */
export async function waitForOffboarding(
  options: OffboardingWaitOptions,
): Promise<OffboardingView> {
  const last = { current: options.view };
  try {
    return await pollUntilEnded(
      {
        ...options,
        read: async (view, signal) =>
          (await options.client.getOffboarding(view.tenant, signal)).body,
        hasEnded: offboardingHasEnded,
        show: (view) => options.reporter?.update(view),
      },
      last,
    );
  } catch (error) {
    if (options.signal?.aborted) throw new OffboardingWaitInterrupted(last.current);
    throw error;
  } finally {
    options.reporter?.finish();
  }
}

/** Ctrl-C while waiting: the offboarding is not stopped, and this says how to find it again. */
export function offboardingInterruptedMessage(view: OffboardingView): string {
  const lines = [`lethe: the offboarding goes on: follow it with lethe tenants get ${view.tenant}`];
  if (view.state === 'SCHEDULED') lines.push(`cancel it with lethe tenants cancel ${view.tenant}`);
  return `${lines.join('\n')}\n`;
}
