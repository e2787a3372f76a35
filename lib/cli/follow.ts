import type { DeletionReceipt } from '../core/index.ts';
import type { ApiResponse, LetheClient } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { receiptSummary, scheduledCommands } from './format.ts';
import { type Output, ProgressReporter } from './progress.ts';
import { WaitInterrupted, waitForDeletion } from './wait.ts';

/** Subscribes to Ctrl-C (SIGINT) until the returned function is called. */
export type Interrupts = (onInterrupt: () => void) => () => void;

/** What following a deletion needs of the command's context. */
export interface FollowContext {
  readonly client: LetheClient;
  readonly json: boolean;
  readonly intervalMs: number;
  readonly stdout: Output;
  readonly stderr: Output;
  /** Milliseconds since some fixed point. */
  readonly now: () => number;
  /** Milliseconds since the epoch. */
  readonly wallNow: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Without it, Ctrl-C is left to its default: the process ends at once. */
  readonly interrupts?: Interrupts | undefined;
}

/** After a 202: print the receipt and what to do next, or follow it to its end with `--wait`. */
export async function follow(
  accepted: ApiResponse<DeletionReceipt>,
  wait: boolean,
  context: FollowContext,
): Promise<ExitCode> {
  if (!wait) {
    const exit = settle(accepted.body, context);
    if (!context.json) context.stdout.write(nextSteps(accepted.body));
    return exit;
  }
  return interruptibly(
    context,
    (signal) =>
      waitForDeletion({
        client: context.client,
        receipt: accepted.body,
        intervalMs: context.intervalMs,
        sleep: context.sleep,
        signal,
        wallNow: context.wallNow,
        reporter: context.json
          ? undefined
          : new ProgressReporter({
              output: context.stderr,
              now: context.now,
              wallNow: context.wallNow,
            }),
      }),
    (receipt) => settle(receipt, context),
    (error) => (error instanceof WaitInterrupted ? interruptedMessage(error.receipt) : undefined),
  );
}

/**
 * Runs a wait with Ctrl-C wired to its abort signal. Its end is `settled`; an interrupted wait
 * (`interrupted` answers its message, undefined for any other error) prints how to follow what
 * goes on, and exits 130.
 */
export async function interruptibly<T>(
  context: Pick<FollowContext, 'interrupts' | 'stderr'>,
  wait: (signal: AbortSignal) => Promise<T>,
  settled: (value: T) => ExitCode,
  interrupted: (error: unknown) => string | undefined,
): Promise<ExitCode> {
  const controller = new AbortController();
  const stop = context.interrupts?.(() => controller.abort());
  try {
    return settled(await wait(controller.signal));
  } catch (error) {
    const message = interrupted(error);
    if (message === undefined) throw error;
    context.stderr.write(message);
    return EXIT.interrupted;
  } finally {
    stop?.();
  }
}

/** The commands that follow a receipt still open: cancel and expedite while it is SCHEDULED. */
function nextSteps(receipt: DeletionReceipt): string {
  if (receipt.state === 'SCHEDULED') return scheduledCommands(receipt);
  return `follow it: lethe deletions get ${receipt.tenant} ${receipt.deletionId}\n`;
}

/** Ctrl-C while waiting: the deletion is not stopped, and this says how to find it again. */
export function interruptedMessage(receipt: DeletionReceipt): string {
  const target = `${receipt.tenant} ${receipt.deletionId}`;
  const lines = [`lethe: the deletion goes on: follow it with lethe deletions get ${target}`];
  if (receipt.state === 'SCHEDULED') lines.push(`cancel it with lethe deletions cancel ${target}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Prints a receipt. A FAILED deletion is a failure of its own kind, and so is a CANCELLED one
 * (nothing was deleted), unless cancelling is what was asked for.
 */
export function settle(
  receipt: DeletionReceipt,
  context: Pick<FollowContext, 'json' | 'stdout' | 'wallNow'>,
  cancelling = false,
): ExitCode {
  context.stdout.write(
    context.json ? `${JSON.stringify(receipt)}\n` : receiptSummary(receipt, context.wallNow()),
  );
  if (receipt.state === 'FAILED') return EXIT.deletionFailed;
  if (receipt.state === 'CANCELLED' && !cancelling) return EXIT.cancelled;
  return EXIT.ok;
}
