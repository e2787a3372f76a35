import type { OffboardingView } from '../core/index.ts';
import type { Command } from './args.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { type FollowContext, interruptibly } from './follow.ts';
import { offboardingSummary } from './offboarding-format.ts';
import {
  OffboardingReporter,
  OffboardingWaitInterrupted,
  offboardingInterruptedMessage,
  waitForOffboarding,
} from './offboarding-wait.ts';

/**
 * Prints an offboarding (its JSON with `--json`). A CANCELLED one exits 9, as a CANCELLED
 * deletion does, unless cancelling is what was asked for.
 */
export function settleOffboarding(
  view: OffboardingView,
  context: Pick<FollowContext, 'json' | 'stdout' | 'wallNow'>,
  cancelling = false,
): ExitCode {
  context.stdout.write(
    context.json ? `${JSON.stringify(view)}\n` : offboardingSummary(view, context.wallNow()),
  );
  return view.state === 'CANCELLED' && !cancelling ? EXIT.cancelled : EXIT.ok;
}

/**
 * `lethe tenants delete TENANT`: offboards the tenant and prints its offboarding, or with
 * `--wait` follows it until it is COMPLETED (exit 0) or CANCELLED (exit 9), its status on
 * stderr. Ctrl-C stops waiting (exit 130); the offboarding goes on.
 */
export async function offboard(
  command: Extract<Command, { kind: 'tenants.delete' }>,
  context: FollowContext,
): Promise<ExitCode> {
  const accepted = await context.client.deleteTenant(command.tenant, command.graceSeconds);
  if (!command.wait) return settleOffboarding(accepted.body, context);
  return interruptibly(
    context,
    (signal) =>
      waitForOffboarding({
        client: context.client,
        view: accepted.body,
        intervalMs: context.intervalMs,
        sleep: context.sleep,
        signal,
        wallNow: context.wallNow,
        reporter: context.json
          ? undefined
          : new OffboardingReporter({
              output: context.stderr,
              now: context.now,
              wallNow: context.wallNow,
            }),
      }),
    (view) => settleOffboarding(view, context),
    (error) =>
      error instanceof OffboardingWaitInterrupted
        ? offboardingInterruptedMessage(error.view)
        : undefined,
  );
}
