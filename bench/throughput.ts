import {
  assertEmpty,
  type BenchContext,
  metered,
  type StackContext,
  seededStream,
  TENANT,
} from './context.ts';
import { type CommandTally, type Economy, economyOf } from './counting.ts';
import {
  type CliResult,
  cliDelete,
  type FloorResult,
  floorDelete,
  type LetheResult,
  letheDelete,
} from './deleters.ts';
import { createBucket, layout } from './seeding.ts';
import { type Summary, summarize } from './stats.ts';

export const FLOOR_BUCKET = 'bench-floor';
export const CLI_BUCKET = 'bench-cli';

/** The keys of run `run`'s copies: where the API puts stream `throughput-<run>` (generation 1). */
export const copyPrefix = (run: number) => `streams/${TENANT}/throughput-${run}/1/`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface CallStats {
  service: string;
  command: string;
  calls: number;
  attempts: number;
  items: number;
  p50Ms: number;
  meanMs: number;
  totalMs: number;
}

export interface LetheRun extends LetheResult {
  economy: Economy;
  calls: CallStats[];
  /** Page messages' wait in the queue. */
  dwellMs?: Summary;
  /** Worker invocations, receive to delete of their messages. */
  invocationMs?: Summary;
  invocationSeconds: number;
  recordsPerInvocation: number[];
  /** One link of a chain: a page's message sent to the next page's message sent. */
  chainCycleMs?: Summary;
}

const maybe = (values: number[]) => (values.length > 0 ? summarize(values) : undefined);

export function callStats(snapshot: Record<string, Record<string, CommandTally>>): CallStats[] {
  return Object.entries(snapshot).flatMap(([service, commands]) =>
    Object.entries(commands).map(([command, tally]) => {
      const total = tally.ms.reduce((sum, ms) => sum + ms, 0);
      const summary = maybe(tally.ms);
      return {
        service,
        command,
        calls: tally.calls,
        attempts: tally.attempts,
        items: tally.items,
        p50Ms: summary?.p50 ?? 0,
        meanMs: summary?.mean ?? 0,
        totalMs: total,
      };
    }),
  );
}

/** The floor, on a fresh copy in a bucket of its own. */
export async function floorRun(context: BenchContext, run: number): Promise<FloorResult> {
  const { options, s3, seeder } = context;
  await createBucket(s3, FLOOR_BUCKET);
  const prefix = copyPrefix(run);
  await seeder.seed(FLOOR_BUCKET, layout(prefix, options.objects, options.partitions));
  const result = await metered(context, () => floorDelete(s3, FLOOR_BUCKET, prefix));
  await assertEmpty(s3, FLOOR_BUCKET, prefix, 'the floor');
  return result;
}

/** A small deletion first, so that no measured run pays for loading and compiling handlers. */
export async function warmUp(context: StackContext) {
  await seededStream(context, 'warm-up', 100, 2);
  const result = await letheDelete(context.api, TENANT, 'warm-up', context.readDeletion);
  context.log(`warm-up deletion: ${result.ms} ms`);
}

/** DELETE to COMPLETED on a fresh copy, every request counted. */
export async function letheRun(context: StackContext, run: number): Promise<LetheRun> {
  const { options, counter, timeline, log } = context;
  const stream = `throughput-${run}`;
  const { bucket, prefix } = await seededStream(
    context,
    stream,
    options.objects,
    options.partitions,
  );
  if (prefix !== copyPrefix(run)) log(`note: ${stream} lives at ${prefix}`);
  await sleep(1000);
  counter.reset();
  timeline.reset();
  const result = await metered(context, () =>
    letheDelete(context.api, TENANT, stream, context.readDeletion),
  );
  // Requests that finish the deletion's messages land just after COMPLETED is seen.
  await sleep(1000);
  const snapshot = counter.snapshot();
  await assertEmpty(context.s3, bucket, prefix, 'Lethe');
  if (result.objects !== options.objects) {
    throw new Error(`Lethe counted ${result.objects} objects of ${options.objects}`);
  }
  const dwellMs = maybe(timeline.dwellMs);
  const invocationMs = maybe(timeline.invocationMs);
  const chainCycleMs = maybe(timeline.chainCycleMs());
  return {
    ...result,
    economy: economyOf(snapshot),
    calls: callStats(snapshot),
    ...(dwellMs ? { dwellMs } : {}),
    ...(invocationMs ? { invocationMs } : {}),
    ...(chainCycleMs ? { chainCycleMs } : {}),
    invocationSeconds: timeline.invocationMs.reduce((sum, ms) => sum + ms, 0) / 1000,
    recordsPerInvocation: [...timeline.recordsPerInvocation],
  };
}

export interface IdleLoad {
  seconds: number;
  requestsPerSecond: number;
  byCommand: Record<string, number>;
}

/** The floor once more with the local stack idle beside it, and what its pollers cost. */
export async function floorBesideIdleStack(
  context: StackContext,
  run: number,
): Promise<{ floor: FloorResult; idle: IdleLoad }> {
  const { counter } = context;
  counter.reset();
  const started = performance.now();
  const floor = await floorRun(context, run);
  const seconds = (performance.now() - started) / 1000;
  const calls = callStats(counter.snapshot());
  const total = calls.reduce((sum, call) => sum + call.attempts, 0);
  return {
    floor,
    idle: {
      seconds,
      requestsPerSecond: total / seconds,
      byCommand: Object.fromEntries(calls.map((call) => [call.command, call.attempts / seconds])),
    },
  };
}

/** `aws s3 rm --recursive` on one copy, with nothing else running against the emulator. */
export async function cliRun(context: BenchContext): Promise<CliResult> {
  const { options, s3, seeder, s3Endpoint, log } = context;
  await createBucket(s3, CLI_BUCKET);
  const prefix = copyPrefix(0);
  await seeder.seed(CLI_BUCKET, layout(prefix, options.objects, options.partitions));
  const result = await metered(context, () =>
    cliDelete(s3Endpoint, CLI_BUCKET, prefix, options.objects),
  );
  await assertEmpty(s3, CLI_BUCKET, prefix, 'aws s3 rm');
  log(`aws s3 rm: ${result.objectsPerSecond.toFixed(0)} objects/s`);
  return result;
}
