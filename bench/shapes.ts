import { parseLocation } from '../test/helpers/http.ts';
import { type StackContext, TENANT } from './context.ts';
import { letheDelete } from './deleters.ts';
import type { SeedObject } from './seeding.ts';
import { percentile } from './stats.ts';

/** One shape of the same work: `streams` streams of `objects` each over `partitions`. */
export interface ShapeRun {
  shape: string;
  streams: number;
  objectsPerStream: number;
  partitions: number;
  /**
   * First DELETE sent to the last deletion's `completedAt` (the stack's clock, this machine):
   * the median of `runs`.
   */
  seconds: number;
  objectsPerSecond: number;
  /** Each run's seconds, in the order run (absent in results older than 2026-12-03). */
  runs?: number[];
}

export interface PlanBesideDeletion {
  objects: number;
  partitions: number;
  /** POST of the plan to the plan COMPLETED. */
  planSeconds: number;
  /** DELETE of the same stream, right after, to COMPLETED. */
  deleteSeconds: number;
  planObjects: number;
  /** The plan's own estimate of the deletion's seconds (on AWS, at the stack's concurrency). */
  estimatedSeconds: number;
}

export interface Shapes {
  /** The same objects in one stream of few partitions, of many, and in many small streams. */
  narrow: ShapeRun;
  wide: ShapeRun;
  many: ShapeRun;
  /** A quarter of the many streams, the same objects each: how many's time grows with them. */
  fewer?: ShapeRun;
  /** Wide over narrow, and many over narrow: 1 when time follows the work, not its shape. */
  wideRatio: number;
  manyRatio: number;
  /** Many over fewer: at most their ratio of streams when time grows with the deletions. */
  manyScaling?: number;
  plan: PlanBesideDeletion;
}

export const SHAPES = {
  objects: 1_200,
  narrowPartitions: 4,
  widePartitions: 150,
  manyStreams: 40,
  fewerStreams: 10,
  manyPartitions: 3,
  /** Runs of each shape, taken in turn (narrow, wide, many, fewer, then again): medians. */
  repeats: 3,
};

/** The shapes' streams have a tenant of their own, so watching them reads only theirs. */
const SHAPES_TENANT = 'shapes';

const day = (index: number) =>
  new Date(Date.UTC(2025, 0, 1) + index * 86_400_000).toISOString().slice(0, 10);

/** `count` objects over `partitions` real days (the throughput layout stops at 31). */
const spread = (prefix: string, count: number, partitions: number): SeedObject[] =>
  Array.from({ length: count }, (_, index) => ({
    key: `${prefix}dt=${day(index % partitions)}/part-${String(index).padStart(6, '0')}.json`,
    body: JSON.stringify({ n: index }),
  }));

async function seeded(
  context: StackContext,
  stream: string,
  count: number,
  partitions: number,
  tenant = TENANT,
) {
  const created = await context.api.create(tenant, stream);
  if (created.status !== 201) throw new Error(`PUT ${stream}: ${created.status}`);
  const { bucket, prefix } = parseLocation(String(created.body.location));
  await context.seeder.seed(bucket, spread(prefix, count, partitions));
}

/** Seeds every stream, then deletes them all at once and waits for every one to complete. */
async function shape(
  context: StackContext,
  name: string,
  streams: number,
  objects: number,
  partitions: number,
  run = 0,
): Promise<ShapeRun> {
  const names = Array.from({ length: streams }, (_, index) => `shape-${name}-${run}-${index}`);
  for (const stream of names) {
    await seeded(context, stream, objects / streams, partitions, SHAPES_TENANT);
  }
  const started = Date.now();
  const replies = await Promise.all(
    names.map((stream) => context.api.delete(SHAPES_TENANT, stream)),
  );
  const ids = replies.map((reply, index) => {
    if (reply.status !== 202) throw new Error(`DELETE ${names[index]}: ${reply.status}`);
    return String(reply.body.deletionId);
  });
  // Only this shape's deletions are read (a second's slack for the clock's grain).
  const records = await context.watchDeletions(SHAPES_TENANT, ids, new Date(started - 1000));
  const last = Math.max(...records.map((record) => Date.parse(String(record.completedAt))));
  const seconds = (last - started) / 1000;
  const deleted = records.reduce((sum, record) => sum + record.objectsDeleted, 0);
  if (deleted !== objects) throw new Error(`${name}: deleted ${deleted} of ${objects} objects`);
  context.log(
    `shape ${name} (run ${run + 1}): ${objects} objects, ${streams} streams: ${seconds.toFixed(1)} s`,
  );
  return {
    shape: name,
    streams,
    objectsPerStream: objects / streams,
    partitions,
    seconds,
    objectsPerSecond: objects / seconds,
  };
}

/** A plan of the throughput layout, then the deletion it previews, one after the other. */
async function planBesideDeletion(context: StackContext): Promise<PlanBesideDeletion> {
  const { options, api } = context;
  await seeded(context, 'shape-plan', options.objects, options.partitions);
  const started = performance.now();
  const posted = await api.call('POST', `/v1/tenants/${TENANT}/streams/shape-plan/plans`);
  if (posted.status !== 202) throw new Error(`POST plan: ${posted.status}`);
  let planned: Record<string, unknown>;
  for (;;) {
    const { body } = await api.call('GET', `/v1/tenants/${TENANT}/plans/${posted.body.planId}`);
    if (body.state === 'COMPLETED') {
      planned = body;
      break;
    }
    if (body.state === 'FAILED') throw new Error(`plan FAILED: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const planSeconds = (performance.now() - started) / 1000;
  const deletion = await letheDelete(api, TENANT, 'shape-plan', context.readDeletion);
  context.log(
    `plan ${planSeconds.toFixed(1)} s, deletion ${(deletion.wallMs / 1000).toFixed(1)} s`,
  );
  return {
    objects: options.objects,
    partitions: options.partitions,
    planSeconds,
    deleteSeconds: deletion.wallMs / 1000,
    planObjects: Number(planned.objects),
    estimatedSeconds: Number((planned.estimate as { seconds?: number } | undefined)?.seconds),
  };
}

/** The run of median seconds among one shape's runs, with every run's seconds beside it. */
export function medianRun(runs: readonly ShapeRun[]): ShapeRun {
  const first = runs[0];
  if (!first) throw new Error('a shape needs at least one run');
  const seconds = percentile(
    runs.map((run) => run.seconds),
    50,
  );
  const objects = first.streams * first.objectsPerStream;
  return {
    ...first,
    seconds,
    objectsPerSecond: objects / seconds,
    runs: runs.map((run) => run.seconds),
  };
}

/**
 * The same 1,200 objects deleted in three shapes: one stream of 4 partitions, one of 150, and
 * 40 streams deleted at once; 10 of those streams at once, to see how many's time grows with
 * its deletions; then a plan of the throughput layout beside its deletion. Each shape runs
 * `SHAPES.repeats` times, the shapes in turn, and reports its median: a shape takes about a
 * second here, where a shared machine's stall moves one run by half of that.
 */
export async function measureShapes(context: StackContext): Promise<Shapes> {
  const { objects, narrowPartitions, widePartitions, manyPartitions } = SHAPES;
  const { manyStreams, fewerStreams, repeats } = SHAPES;
  const fewerObjects = (objects / manyStreams) * fewerStreams;
  const runs: Record<'narrow' | 'wide' | 'many' | 'fewer', ShapeRun[]> = {
    narrow: [],
    wide: [],
    many: [],
    fewer: [],
  };
  for (let run = 0; run < repeats; run++) {
    runs.narrow.push(await shape(context, 'narrow', 1, objects, narrowPartitions, run));
    runs.wide.push(await shape(context, 'wide', 1, objects, widePartitions, run));
    runs.many.push(await shape(context, 'many', manyStreams, objects, manyPartitions, run));
    runs.fewer.push(await shape(context, 'fewer', fewerStreams, fewerObjects, manyPartitions, run));
  }
  const narrow = medianRun(runs.narrow);
  const wide = medianRun(runs.wide);
  const many = medianRun(runs.many);
  const fewer = medianRun(runs.fewer);
  const plan = await planBesideDeletion(context);
  return {
    narrow,
    wide,
    many,
    fewer,
    wideRatio: wide.seconds / narrow.seconds,
    manyRatio: many.seconds / narrow.seconds,
    manyScaling: many.seconds / fewer.seconds,
    plan,
  };
}
