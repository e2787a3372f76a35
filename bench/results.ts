import type { Acknowledgement } from './acknowledgement.ts';
import type { BudgetRun } from './budget.ts';
import {
  type CostLine,
  costPerMillion,
  PRICES,
  type Projection,
  project,
  type ScaleAssumptions,
} from './cost.ts';
import type { Economy } from './counting.ts';
import type { CliResult, FloorResult } from './deleters.ts';
import type { TransactionCost } from './emulator-probe.ts';
import type { HeapProbe } from './memory.ts';
import type { BenchOptions } from './options.ts';
import type { SeedRates } from './seeding.ts';
import type { Shapes } from './shapes.ts';
import { percentile } from './stats.ts';
import type { ThrottleRun } from './throttling.ts';
import type { IdleLoad, LetheRun } from './throughput.ts';

export interface StackSettings {
  workerMemoryMB: number;
  workerTimeoutSeconds: number;
  batchSize: number;
  maxConcurrency: number;
  /** Concurrency the local worker poller ran with. */
  localConcurrency: number;
  pageSize: number;
  settings: Record<string, string | undefined>;
}

export interface Environment {
  command: string;
  node: string;
  moto: string;
  awsCli: string;
  cpus: number;
  cpuModel: string;
  memoryMB: number;
  loadAverage: { start: number[]; end: number[] };
  git: { commit: string; modifiedFiles: number };
  seed: string;
}

export interface Measurements {
  environment: Environment;
  options: BenchOptions;
  stack: StackSettings;
  seedRates: SeedRates;
  floor: FloorResult[];
  lethe: LetheRun[];
  floorBesideIdleStack: { floor: FloorResult; idle: IdleLoad };
  cli?: CliResult;
  /** Floor runs just before and just after the CLI, which it is compared with. */
  floorAroundCli?: FloorResult[];
  /** Why `aws s3 rm` has no result, when it failed twice. */
  cliError?: string;
  acknowledgement: Acknowledgement;
  /** The same work in three shapes, and a plan beside its deletion (absent in older results). */
  shapes?: Shapes;
  /** The pipeline held to LETHE_MAX_KEYS_PER_SECOND (absent in older results). */
  budget?: BudgetRun;
  /** Lethe against S3's request limit in simulation (absent in older and quick results). */
  throttling?: ThrottleRun;
  heap: HeapProbe;
  /** moto's TransactWriteItems latency by table size, and the stack's table after the run. */
  transactions: TransactionCost[];
  tableHistory: { items: number; streamRecords: number };
  peakRssMB: Record<string, number>;
  durationSeconds: number;
}

export interface Target {
  name: string;
  target: string;
  value: string;
  met: boolean | undefined;
}

export interface Results extends Measurements {
  generatedAt: string;
  summary: {
    floorObjectsPerSecond: number;
    letheObjectsPerSecond: number;
    cliObjectsPerSecond?: number;
    /** Median of the ratios of each Lethe run to the floor run just before it. */
    letheOverFloor: number;
    pairRatios: number[];
    /**
     * Lethe over the CLI, each measured against the floor beside it: the paired Lethe/floor
     * median times the floor around the CLI over the CLI. Robust to the machine's speed
     * drifting between the Lethe runs and the CLI run, minutes later.
     */
    letheOverCli?: number;
    /** The floor runs around the CLI over the CLI (mean of the two). */
    floorOverCli?: number;
    /** The emulator's CPU seconds per 1,000 objects deleted (median): work, not wall time. */
    floorEmulatorCpuPerThousand?: number;
    letheEmulatorCpuPerThousand?: number;
  };
  perThousand: Array<Economy & { run: number }>;
  cost: {
    lines: CostLine[];
    total: number;
    totalAws: number;
    cliTotal: number;
    prices: typeof PRICES;
  };
  projection: {
    aws: ScaleAssumptions;
    fullCpu: ScaleAssumptions;
    measured: ScaleAssumptions;
    rows: Array<{ aws: Projection; fullCpu: Projection; measured: Projection }>;
  };
  targets: Target[];
}

const median = (values: number[]) => percentile(values, 50);
const perThousandOf = (economy: Economy, objects: number): Economy => {
  const scale = 1000 / objects;
  const scaled = Object.fromEntries(
    Object.entries(economy).map(([key, value]) => [
      key,
      typeof value === 'number'
        ? value * scale
        : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, (v as number) * scale])),
    ]),
  );
  return scaled as unknown as Economy;
};

/**
 * Assumed waiting on AWS (not measured here; there is no account): a chain link waits ~0.3 s
 * (a 1,000-key LIST ~0.2 s, S3's quoted 100-200 ms first-byte latency, plus two reads, a
 * transaction, a send and the event source's hand-over), a whole page ~1 s (the link and a
 * 1,000-key DeleteObjects). The CPU the worker spends on top is measured (bench/worker-heap.ts)
 * and scaled to the memory: Lambda gives one vCPU at 1,769 MB, in proportion below it.
 */
export const AWS_CHAIN_WAIT_SECONDS = 0.3;
export const AWS_PAGE_WAIT_SECONDS = 1.0;
export const cpuSeconds = (cpuMs: number, memoryMB: number) =>
  cpuMs / 1000 / Math.min(1, memoryMB / 1769);

export function assemble(measured: Measurements): Results {
  const { options, stack, lethe, floor, cli, acknowledgement, heap } = measured;
  const listCpuMs = heap.page.cpuByCommand.ListObjectsV2?.cpuMs ?? 0;
  const awsPageSeconds = (memoryMB: number) =>
    AWS_PAGE_WAIT_SECONDS + cpuSeconds(heap.page.cpuMs, memoryMB);
  const floorRate = median(floor.map((run) => run.objectsPerSecond));
  const letheRate = median(lethe.map((run) => run.objectsPerSecond));
  const pairRatios = lethe.map(
    (run, index) => run.objectsPerSecond / (floor[index]?.objectsPerSecond ?? Number.NaN),
  );
  const letheOverFloor = median(pairRatios);
  const cpuPerThousand = (runs: Array<{ emulatorCpuSeconds?: number; objects: number }>) => {
    const values = runs.flatMap((run) =>
      run.emulatorCpuSeconds === undefined ? [] : [(1000 * run.emulatorCpuSeconds) / run.objects],
    );
    return values.length > 0 ? median(values) : undefined;
  };
  const floorCpu = cpuPerThousand(floor);
  const letheCpu = cpuPerThousand(lethe);
  const cliRate = cli?.objectsPerSecond;
  const floorAroundCli = measured.floorAroundCli ?? [];
  const floorOverCli =
    cliRate && floorAroundCli.length > 0
      ? floorAroundCli.reduce((sum, run) => sum + run.objectsPerSecond, 0) /
        floorAroundCli.length /
        cliRate
      : undefined;
  const letheOverCli = floorOverCli === undefined ? undefined : letheOverFloor * floorOverCli;
  const perThousand = lethe.map((run, index) => ({
    ...perThousandOf(run.economy, run.objects),
    run: index,
  }));
  const worst = (pick: (economy: Economy) => number) =>
    Math.max(...perThousand.map((economy) => pick(economy)));
  // The cost model takes the run with the median throughput.
  const sorted = [...lethe].sort((a, b) => a.objectsPerSecond - b.objectsPerSecond);
  const typical = sorted[Math.floor((sorted.length - 1) / 2)] as LetheRun;
  const cost = costPerMillion({
    objects: typical.objects,
    economy: typical.economy,
    invocationSeconds: typical.invocationSeconds,
    workerMemoryMB: stack.workerMemoryMB,
    awsPageSeconds: awsPageSeconds(stack.workerMemoryMB),
    pageSize: stack.pageSize,
  });
  // aws s3 rm: one LIST per 1,000 keys, one (free) DeleteObject per key.
  const cliTotal = (1e6 / 1000 / 1000) * PRICES.s3List.usd;
  const awsAt = (memoryMB: number): ScaleAssumptions => ({
    perPartitionRate: 3500,
    chainCycleSeconds: AWS_CHAIN_WAIT_SECONDS + cpuSeconds(listCpuMs, memoryMB),
    pageSeconds: awsPageSeconds(memoryMB),
    concurrency: stack.maxConcurrency,
    batchSize: stack.batchSize,
  });
  const aws = awsAt(stack.workerMemoryMB);
  const fullCpu = awsAt(1769);
  const local: ScaleAssumptions = {
    ...aws,
    chainCycleSeconds: (typical.chainCycleMs?.p50 ?? 0) / 1000 || aws.chainCycleSeconds,
    pageSeconds: (typical.invocationMs?.p50 ?? 0) / 1000 || aws.pageSeconds,
  };
  const rows = [1, 10, 100].map((partitions) => ({
    aws: project(1e8, partitions, aws),
    fullCpu: project(1e8, partitions, fullCpu),
    measured: project(1e8, partitions, local),
  }));
  const fmt = (value: number, digits = 2) => value.toFixed(digits);
  const targets: Target[] = [
    {
      name: 'DELETE p50, 10,000-object stream over 10-object stream',
      target: '≤ 1.5x',
      value: `${fmt(acknowledgement.p50Ratio)}x (${fmt(acknowledgement.large.ackMs.p50, 1)} ms vs ${fmt(acknowledgement.small.ackMs.p50, 1)} ms)`,
      met: options.ackLargeObjects >= 10_000 ? acknowledgement.p50Ratio <= 1.5 : undefined,
    },
    ...(measured.shapes
      ? [
          {
            name: `Wide: ${measured.shapes.wide.partitions} partitions over ${measured.shapes.narrow.partitions}, same ${measured.shapes.narrow.streams * measured.shapes.narrow.objectsPerStream} objects`,
            target: '≤ 2x the time',
            value: `${fmt(measured.shapes.wideRatio)}x (${fmt(measured.shapes.wide.seconds, 1)} s vs ${fmt(measured.shapes.narrow.seconds, 1)} s)`,
            met: measured.shapes.wideRatio <= 2,
          },
          {
            name: `Many: ${measured.shapes.many.streams} streams at once over one stream, same objects`,
            target: '≤ 2x the time',
            value: `${fmt(measured.shapes.manyRatio)}x (${fmt(measured.shapes.many.seconds, 1)} s vs ${fmt(measured.shapes.narrow.seconds, 1)} s)`,
            met: measured.shapes.manyRatio <= 2,
          },
          ...(measured.shapes.fewer && measured.shapes.manyScaling !== undefined
            ? [
                {
                  name: `Many: ${measured.shapes.many.streams} streams at once over ${measured.shapes.fewer.streams}, ${measured.shapes.many.objectsPerStream} objects each`,
                  target: `≤ ${measured.shapes.many.streams / measured.shapes.fewer.streams}x the time (grows with the deletions, not faster)`,
                  value: `${fmt(measured.shapes.manyScaling)}x (${fmt(measured.shapes.many.seconds, 1)} s vs ${fmt(measured.shapes.fewer.seconds, 1)} s)`,
                  met:
                    measured.shapes.manyScaling <=
                    measured.shapes.many.streams / measured.shapes.fewer.streams,
                },
              ]
            : []),
        ]
      : []),
    ...(measured.budget
      ? [
          {
            name: `Key budget (LETHE_MAX_KEYS_PER_SECOND=${measured.budget.keysPerSecond}), every worker together`,
            target: 'within 10%',
            value: `${fmt(100 * measured.budget.ratio, 0)}% (${fmt(measured.budget.sustainedKeysPerSecond, 0)} keys/s sustained over ${measured.budget.deleteRequests} DeleteObjects${
              measured.budget.withAllowanceRatio === undefined
                ? ''
                : `, after the bucket's first second's worth; ${fmt(100 * measured.budget.withAllowanceRatio, 0)}% from the first delete`
            })`,
            met: options.quick ? undefined : Math.abs(measured.budget.ratio - 1) <= 0.1,
          },
        ]
      : []),
    ...(measured.throttling
      ? [
          {
            name: `Throttled: S3 admitting ${measured.throttling.keysPerSecond} keys/s per partition, ${measured.throttling.partitions} partitions, pages of ${measured.throttling.pageSize}`,
            target: '≥ 90% of R x partitions',
            value: `${fmt(100 * measured.throttling.ofLimit, 0)}% (${fmt(measured.throttling.sustainedKeysPerSecond, 0)} keys/s sustained of ${measured.throttling.keysPerSecond * measured.throttling.partitions})`,
            met: measured.throttling.ofLimit >= 0.9,
          },
          {
            name: 'Throttled: DeleteObjects refused with SlowDown',
            target: '≤ 5%',
            value: `${fmt(100 * measured.throttling.slowDownShare, 1)}% (${measured.throttling.refused} of ${measured.throttling.deleteRequests})`,
            met: measured.throttling.slowDownShare <= 0.05,
          },
        ]
      : []),
    {
      name: 'Throughput, Lethe over the emulator’s floor',
      target: '≥ 90%',
      value: `${fmt(100 * letheOverFloor, 1)}% (median of ${pairRatios.length} paired runs; medians ${fmt(letheRate, 0)} vs ${fmt(floorRate, 0)} objects/s)`,
      met: options.quick ? undefined : letheOverFloor >= 0.9,
    },
    {
      name: 'Throughput, Lethe over aws s3 rm',
      target: '> 10x',
      value:
        cliRate && letheOverCli && floorOverCli
          ? `${fmt(letheOverCli, 1)}x (${fmt(100 * letheOverFloor, 0)}% of the floor × the floor ${fmt(floorOverCli, 1)}x the CLI; ${fmt(cliRate, 0)} objects/s)`
          : (measured.cliError ?? 'not run'),
      met: letheOverCli && !options.quick ? letheOverCli > 10 : undefined,
    },
    {
      name: 'S3 requests per 1,000 objects',
      target: '≤ 2.1',
      value: fmt(
        worst((economy) => economy.s3Requests),
        3,
      ),
      met: options.quick ? undefined : worst((economy) => economy.s3Requests) <= 2.1,
    },
    {
      name: 'SQS messages per 1,000 objects',
      target: '≤ 1.2',
      value: fmt(
        worst((economy) => economy.sqsMessages),
        3,
      ),
      met: options.quick ? undefined : worst((economy) => economy.sqsMessages) <= 1.2,
    },
    {
      name: 'Worker heap above idle, one page of 1,000 keys',
      target: '< 64 MB',
      value: `${fmt(heap.page.peakAboveIdleMB, 1)} MB`,
      met: heap.page.peakAboveIdleMB < 64,
    },
  ];
  return {
    generatedAt: new Date().toISOString(),
    ...measured,
    summary: {
      floorObjectsPerSecond: floorRate,
      letheObjectsPerSecond: letheRate,
      ...(cliRate && letheOverCli
        ? { cliObjectsPerSecond: cliRate, letheOverCli, floorOverCli }
        : {}),
      letheOverFloor,
      pairRatios,
      ...(floorCpu !== undefined ? { floorEmulatorCpuPerThousand: floorCpu } : {}),
      ...(letheCpu !== undefined ? { letheEmulatorCpuPerThousand: letheCpu } : {}),
    },
    perThousand,
    cost: { ...cost, cliTotal, prices: PRICES },
    projection: { aws, fullCpu, measured: local, rows },
    targets,
  };
}
