import type { Command } from './args.ts';
import { ApiError, type LetheClient } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import type { FollowContext } from './follow.ts';
import { formatCount, plural, RateMeter } from './progress.ts';
import { type Output, StatusLine } from './status-line.ts';

/** `lethe seed TENANT/STREAM`, its options applied. */
export type SeedCommand = Extract<Command, { kind: 'seed' }>;

const encoder = new TextEncoder();

/** The body of batch `seq`: a JSON array of one small event, or of two for an even `seq`. */
export function seedBatch(seq: number): Uint8Array {
  const events: Array<Record<string, unknown>> = [{ seq, seeded: true }];
  if (seq % 2 === 0) events.push({ seq, seeded: true, second: true });
  return encoder.encode(JSON.stringify(events));
}

/** `seeded 1,234 of 5,000 objects (312/s)`; the rate once it is known. */
export function seedProgress(stored: number, total: number, perSecond?: number): string {
  const rate = perSecond === undefined ? '' : ` (${formatCount(perSecond)}/s)`;
  return `seeded ${formatCount(stored)} of ${plural(total, 'object')}${rate}`;
}

/** What a SeedReporter needs: where to write, a clock, the number of objects to store. */
export interface SeedReporterOptions {
  readonly output: Output;
  /** Milliseconds since some fixed point. */
  readonly now: () => number;
  readonly total: number;
  /** Least time between two redraws (and rate samples). @default 100 */
  readonly redrawMs?: number;
  /** Least time between two lines when the output is not a TTY. @default 5000 */
  readonly plainIntervalMs?: number;
}

/** Shows how many objects are stored: redrawn in place on a TTY, a line now and then elsewhere. */
export class SeedReporter {
  readonly #line: StatusLine;
  readonly #now: () => number;
  readonly #total: number;
  readonly #redrawMs: number;
  readonly #meter = new RateMeter();
  #shownAt: number | undefined;

  constructor(options: SeedReporterOptions) {
    this.#line = new StatusLine(options.output, options.plainIntervalMs);
    this.#now = options.now;
    this.#total = options.total;
    this.#redrawMs = options.redrawMs ?? 100;
  }

  /** `stored` objects so far; shown at most every `redrawMs`, and always once all are stored. */
  update(stored: number): void {
    const at = this.#now();
    const last = this.#shownAt;
    if (last !== undefined && at - last < this.#redrawMs && stored < this.#total) return;
    this.#shownAt = at;
    this.#meter.add(at, stored);
    // The last count is a state of its own, so a pipe shows it however soon it came.
    const state = stored >= this.#total ? 'SEEDED' : 'SEEDING';
    this.#line.show(state, at, seedProgress(stored, this.#total, this.#meter.perSecond()));
  }

  /** Clears the line on a TTY: stdout says the rest. */
  finish(): void {
    this.#line.clear();
  }
}

/** What storing the batches needs: a client, where, how many, how many at a time. */
export interface IngestBatchesOptions {
  readonly client: Pick<LetheClient, 'ingest'>;
  readonly tenant: string;
  readonly stream: string;
  readonly objects: number;
  readonly concurrency: number;
  /** Aborted on Ctrl-C: no more batches are sent; those in flight are waited for. */
  readonly signal?: AbortSignal | undefined;
  /** Called with the number of objects stored so far, after each one. */
  readonly onStored?: (stored: number) => void;
}

/** How storing the batches ended: how many were stored, and the first error if one stopped it. */
export interface IngestBatchesResult {
  readonly stored: number;
  readonly failure?: { readonly error: unknown };
}

/**
 * Sends `objects` batches, `concurrency` at a time. The first error (a 409, a 404, no answer)
 * stops it: no batch is sent after it, and those in flight are waited for.
 */
export async function ingestBatches(options: IngestBatchesOptions): Promise<IngestBatchesResult> {
  const { client, tenant, stream, objects, signal } = options;
  let next = 0;
  let stored = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < objects && failure === undefined && !signal?.aborted) {
      const seq = ++next;
      try {
        await client.ingest(tenant, stream, seedBatch(seq));
        options.onStored?.(++stored);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, objects) }, worker));
  return failure === undefined ? { stored } : { stored, failure };
}

/** The stream, or a 404 with the command that creates it. */
async function streamOf(command: SeedCommand, client: Pick<LetheClient, 'getStream'>) {
  try {
    return (await client.getStream(command.tenant, command.stream)).body;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    throw error.withHints([
      `hint: create it first: lethe streams create ${command.tenant}/${command.stream}`,
    ]);
  }
}

/**
 * `lethe seed`: stores `objects` small objects in a stream that exists, `concurrency` requests at
 * a time, with their count on stderr. Ctrl-C stops sending (exit 130); an error stops it at once
 * and ends the run as that error does (a 409: exit 4), saying how many were stored.
 */
export async function seed(command: SeedCommand, context: FollowContext): Promise<ExitCode> {
  const view = await streamOf(command, context.client);
  const ref = `${command.tenant}/${command.stream}`;
  const reporter = context.json
    ? undefined
    : new SeedReporter({ output: context.stderr, now: context.now, total: command.objects });
  const controller = new AbortController();
  const stop = context.interrupts?.(() => controller.abort());
  let result: IngestBatchesResult;
  try {
    reporter?.update(0);
    result = await ingestBatches({
      client: context.client,
      ...command,
      signal: controller.signal,
      onStored: (stored) => reporter?.update(stored),
    });
  } finally {
    reporter?.finish();
    stop?.();
  }
  const count = `${formatCount(result.stored)} of ${plural(command.objects, 'object')} into ${ref}`;
  if (result.failure) {
    context.stderr.write(`lethe: stopped after seeding ${count}\n`);
    throw result.failure.error;
  }
  if (controller.signal.aborted) {
    context.stderr.write(`lethe: interrupted: seeded ${count}; no more were sent\n`);
    return EXIT.interrupted;
  }
  const { tenant, stream } = command;
  context.stdout.write(
    context.json
      ? `${JSON.stringify({ objects: result.stored, tenant, stream })}\n`
      : `seeded ${plural(result.stored, 'object')} into ${ref} (${view.location})\n`,
  );
  return EXIT.ok;
}
