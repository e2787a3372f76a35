import { parseArgs } from 'node:util';
import type { SeedMode } from './seeding.ts';

export interface BenchOptions {
  /** Objects of the throughput layout (each copy). */
  objects: number;
  /** Date partitions of the throughput layout. */
  partitions: number;
  /** Runs of the floor and of Lethe, each on a fresh copy. */
  repeats: number;
  /** Streams of each size whose DELETE is timed. */
  ackStreams: number;
  ackSmallObjects: number;
  ackLargeObjects: number;
  /** Objects of each partition of the heap probe (one page is 1,000 of them). */
  heapObjects: number;
  /** Records in the heap probe's batch (the event source's batch size). */
  heapBatch: number;
  seedRateSample: number;
  seed: SeedMode;
  /** Skip `aws s3 rm` (e.g. where the AWS CLI is not installed). */
  skipCli: boolean;
  /** An emulator already running; without it the benchmark starts its own moto. */
  endpoint?: string;
  workerConcurrency?: number;
  quick: boolean;
  /** Only render the report and chart again from the results file. */
  render: boolean;
  out: string;
  report: string;
  chart: string;
}

const DEFAULTS = {
  objects: 20_000,
  partitions: 10,
  repeats: 3,
  ackStreams: 7,
  ackSmallObjects: 10,
  ackLargeObjects: 10_000,
  heapObjects: 1_500,
  heapBatch: 5,
  seedRateSample: 400,
};

/** `--quick`: small sizes for iterating; its figures are not the benchmark's. */
const QUICK = {
  objects: 2_000,
  partitions: 10,
  repeats: 1,
  ackStreams: 3,
  ackSmallObjects: 10,
  ackLargeObjects: 2_000,
  heapObjects: 1_500,
  heapBatch: 2,
  seedRateSample: 100,
};

export const USAGE = `npm run bench -- [options]     (every option also reads LETHE_BENCH_<NAME>)

  --quick                      small sizes, for iterating (2,000 objects, 1 repeat)
  --render                     only regenerate the report and chart from the results file
  --objects N                  objects in the throughput layout (default ${DEFAULTS.objects})
  --partitions N               date partitions of the layout (default ${DEFAULTS.partitions})
  --repeats N                  runs of the floor and of Lethe (default ${DEFAULTS.repeats})
  --ack-streams N              streams of each size whose DELETE is timed (default ${DEFAULTS.ackStreams})
  --ack-small-objects N        objects of a small stream (default ${DEFAULTS.ackSmallObjects})
  --ack-large-objects N        objects of a large stream (default ${DEFAULTS.ackLargeObjects})
  --heap-objects N             objects per partition of the heap probe (default ${DEFAULTS.heapObjects})
  --heap-batch N               records of the heap probe's batch (default ${DEFAULTS.heapBatch})
  --seed bulk|put              how copies are created (default bulk; put with --endpoint)
  --skip-cli                   do not run aws s3 rm
  --endpoint URL               use this emulator instead of starting moto
  --worker-concurrency N       concurrent worker invocations (default: the stack's)
  --out FILE                   results (default bench/results.json)
  --report FILE                report (default BENCHMARKS.md)
  --chart FILE                 chart (default bench/chart.svg)`;

export function parseOptions(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean' },
      render: { type: 'boolean' },
      objects: { type: 'string' },
      partitions: { type: 'string' },
      repeats: { type: 'string' },
      'ack-streams': { type: 'string' },
      'ack-small-objects': { type: 'string' },
      'ack-large-objects': { type: 'string' },
      'heap-objects': { type: 'string' },
      'heap-batch': { type: 'string' },
      'seed-rate-sample': { type: 'string' },
      seed: { type: 'string' },
      'skip-cli': { type: 'boolean' },
      endpoint: { type: 'string' },
      'worker-concurrency': { type: 'string' },
      out: { type: 'string' },
      report: { type: 'string' },
      chart: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const fromEnv = (name: string) => env[`LETHE_BENCH_${name.toUpperCase().replaceAll('-', '_')}`];
  const raw = (name: keyof typeof values) => (values[name] as string | undefined) ?? fromEnv(name);
  const flag = (name: 'quick' | 'skip-cli' | 'render') =>
    values[name] === true || /^(1|true|yes)$/i.test(fromEnv(name) ?? '');
  const quick = flag('quick');
  const sizes = quick ? QUICK : DEFAULTS;
  const int = (name: keyof typeof values, fallback: number, min = 1) => {
    const value = raw(name);
    if (value === undefined || value === '') return fallback;
    const number = Number(value);
    if (!Number.isInteger(number) || number < min) {
      throw new Error(`--${name} must be an integer of at least ${min} (got ${value})`);
    }
    return number;
  };
  const endpoint = raw('endpoint');
  const seed = raw('seed') ?? (endpoint ? 'put' : 'bulk');
  if (seed !== 'bulk' && seed !== 'put')
    throw new Error(`--seed must be bulk or put (got ${seed})`);
  if (seed === 'bulk' && endpoint) {
    throw new Error('--seed bulk needs the benchmark’s own moto (bench/moto_server_bulk.py)');
  }
  const workerConcurrency = raw('worker-concurrency');
  return {
    objects: int('objects', sizes.objects),
    partitions: int('partitions', sizes.partitions),
    repeats: int('repeats', sizes.repeats),
    ackStreams: int('ack-streams', sizes.ackStreams),
    ackSmallObjects: int('ack-small-objects', sizes.ackSmallObjects),
    ackLargeObjects: int('ack-large-objects', sizes.ackLargeObjects),
    heapObjects: int('heap-objects', sizes.heapObjects),
    heapBatch: int('heap-batch', sizes.heapBatch),
    seedRateSample: int('seed-rate-sample', sizes.seedRateSample),
    seed,
    skipCli: flag('skip-cli'),
    ...(endpoint ? { endpoint } : {}),
    ...(workerConcurrency ? { workerConcurrency: int('worker-concurrency', 0) } : {}),
    quick,
    render: flag('render'),
    out: raw('out') ?? 'bench/results.json',
    report: raw('report') ?? 'BENCHMARKS.md',
    chart: raw('chart') ?? 'bench/chart.svg',
  };
}
