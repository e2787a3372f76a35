import { randomBytes } from 'node:crypto';
import { hasEnded } from '../core/index.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { describeFailure } from './failure.ts';
import type { FollowContext } from './follow.ts';
import { formatDuration, plural } from './progress.ts';
import { SMOKE_STEPS, SmokeCheckFailed, type SmokeClient, type SmokeState } from './smoke-steps.ts';
import { StatusLine } from './status-line.ts';

/** What the smoke test needs of the command's context. */
export type SmokeContext = Omit<FollowContext, 'client'> & { readonly client: SmokeClient };

/** The names of a run: a tenant of its own, so that it never touches anyone's data. */
export interface SmokeNames {
  readonly tenant: string;
  readonly stream: string;
}

/** `smoke-20261207-184633-1a2b3c`, and a stream `events-1a2b3c`: unique, and dated. */
export function smokeNames(wallNow: number, random = randomBytes(3).toString('hex')): SmokeNames {
  const stamp = new Date(wallNow).toISOString().replace(/[-:]/g, '').slice(0, 15).replace('T', '-');
  return { tenant: `smoke-${stamp}-${random}`, stream: `events-${random}` };
}

/** One step as it went: what held, or why it failed, and how long it took. */
interface StepResult {
  readonly step: string;
  readonly passed: boolean;
  readonly ms: number;
  readonly check?: string;
  readonly error?: string;
}

const NAME_WIDTH = Math.max(...SMOKE_STEPS.map((step) => step.name.length)) + 2;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** `ok    plan               2.1s  COMPLETED: ...` */
const stepLine = ({ step, passed, ms, check, error }: StepResult) =>
  `${passed ? 'ok  ' : 'FAIL'}  ${step.padEnd(NAME_WIDTH)}${seconds(ms).padStart(6)}  ${passed ? check : error}\n`;

/**
 * `lethe smoke`: runs a short scenario end to end against the endpoint under a tenant of its
 * own (create, ingest, plan, delete with a grace window and cancel, delete, wait, verify the
 * certificate, clean up), printing each step and its check as it goes. Exit 0 only when every
 * step held; else the failing step's code, with what it left behind and how to clean it.
 */
export async function smoke(
  context: SmokeContext,
  names: SmokeNames = smokeNames(context.wallNow()),
): Promise<ExitCode> {
  const { client, stdout, now } = context;
  const controller = new AbortController();
  const stop = context.interrupts?.(() => controller.abort());
  const state: SmokeState = {
    ...names,
    client,
    intervalMs: context.intervalMs,
    sleep: context.sleep,
    now,
    wallNow: context.wallNow,
    signal: controller.signal,
    ingested: { objects: 0, events: 0 },
    deleted: false,
  };
  // On a terminal, a wait shows what it waits for and since when; a pipe gets the step lines only.
  const status = !context.json && context.stderr.isTTY ? new StatusLine(context.stderr) : undefined;
  state.waiting = status
    ? (what, ms) => status.show('waiting', now(), `waiting for ${what}: ${formatDuration(ms)}`)
    : undefined;
  const results: StepResult[] = [];
  const started = now();
  if (!context.json) {
    stdout.write(
      `smoke test of ${client.endpoint}, tenant ${names.tenant}, stream ${names.stream}\n`,
    );
  }
  try {
    for (const step of SMOKE_STEPS) {
      const at = now();
      let failure: StepFailure | undefined;
      let check = '';
      try {
        check = await step.run(state);
      } catch (error) {
        failure = failureOf(error, names.tenant);
      }
      status?.clear();
      // Ctrl-C: the step it stopped, or the one that ended all the same, is the last one run.
      if (controller.signal.aborted) failure = INTERRUPTED;
      const ms = now() - at;
      const result: StepResult = failure
        ? { step: step.name, passed: false, ms, error: failure.message }
        : { step: step.name, passed: true, ms, check };
      results.push(result);
      if (!context.json) stdout.write(stepLine(result));
      if (failure) return report(state, context, { results, step: step.name, ...failure });
    }
  } finally {
    stop?.();
  }
  const total = seconds(now() - started);
  const kept = `what any deletion keeps: the receipts of tenant ${names.tenant} (until the stack's receiptRetentionDays) and its plan (7 days)`;
  stdout.write(
    context.json
      ? `${JSON.stringify({ passed: true, endpoint: client.endpoint, ...names, steps: results, kept })}\n`
      : `smoke test passed: ${results.length} steps in ${total}\nleft behind: ${kept}\n`,
  );
  return EXIT.ok;
}

/** Why a step failed: the exit code, one line, and the hints under it. */
interface StepFailure {
  readonly code: ExitCode;
  readonly message: string;
  readonly lines: readonly string[];
}

const INTERRUPTED: StepFailure = { code: EXIT.interrupted, message: 'interrupted', lines: [] };

/** A check that did not hold, or an error described as `lethe` describes any. */
function failureOf(error: unknown, tenant: string): StepFailure {
  if (error instanceof SmokeCheckFailed) {
    return { code: error.code, message: error.message, lines: [] };
  }
  const {
    code,
    lines: [message = '', ...lines],
  } = describeFailure(error, { json: false, tenant });
  return { code, message, lines };
}

interface SmokeFailure extends StepFailure {
  readonly results: readonly StepResult[];
  readonly step: string;
}

/** Says which step failed and why, what is left of the smoke tenant, and how to clean it. */
function report(state: SmokeState, context: SmokeContext, failure: SmokeFailure): ExitCode {
  const { tenant, stream, client } = state;
  const left = leftBehind(state);
  const cleanup =
    left.length > 0
      ? `lethe tenants delete ${tenant} --grace 0 --wait --endpoint ${client.endpoint}`
      : undefined;
  const lines = [
    `smoke test failed at step ${failure.step}: ${failure.message}`,
    ...failure.lines,
    ...(left.length > 0
      ? ['left behind:', ...left.map((line) => `  ${line}`), `clean it up: ${cleanup}`]
      : ['left behind: no stream data']),
  ];
  if (context.json) {
    const body = {
      passed: false,
      endpoint: client.endpoint,
      tenant,
      stream,
      steps: failure.results,
      failedStep: failure.step,
      leftBehind: left,
      ...(cleanup ? { cleanup } : {}),
    };
    context.stdout.write(`${JSON.stringify(body)}\n`);
  }
  context.stderr.write(`lethe: ${lines.join('\n')}\n`);
  return failure.code;
}

/** What a run that stopped would leave of the smoke tenant, one line each. */
export function leftBehind(state: SmokeState): string[] {
  if (!state.created || state.deleted) return [];
  const lines = [
    `stream ${state.tenant}/${state.stream} at ${state.created.location}, with ${plural(state.ingested.objects, 'object')} stored`,
  ];
  const deletion = state.deletion;
  if (deletion && !hasEnded(deletion.state)) {
    lines.push(`its deletion ${deletion.deletionId}, ${deletion.state}`);
  } else if (deletion?.state === 'FAILED') {
    lines.push(
      `its deletion ${deletion.deletionId}, FAILED: retry it with lethe deletions retry ${state.tenant} ${deletion.deletionId}`,
    );
  }
  return lines;
}
