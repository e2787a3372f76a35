/**
 * `npm run bench`: Lethe's headline claims, measured side by side in one run on this machine.
 * See BENCHMARKS.md (which this regenerates) and `npm run bench -- --help`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type Emulators, startEmulators } from '#lib/local/emulator.ts';
import { LocalStack } from '#lib/local/local-stack.ts';
import { resourcesOfType, synthesizeTemplate } from '#lib/local/template.ts';
import { ENV } from '#lib/support/index.ts';
import { measureAcknowledgement } from './acknowledgement.ts';
import { measureBudget } from './budget.ts';
import { renderChart } from './chart.ts';
import { emulatorProfiler, type StackContext, stackContext } from './context.ts';
import { RequestCounter } from './counting.ts';
import type { FloorResult } from './deleters.ts';
import { probeTransactions, tableHistory } from './emulator-probe.ts';
import { cpuSecondsOf, probeWorkerHeap, ResidentSampler } from './memory.ts';
import { parseOptions } from './options.ts';
import { renderReport } from './report.ts';
import { assemble, type Environment, type Results, type StackSettings } from './results.ts';
import { createBucket, createSeeder, measureSeedRates } from './seeding.ts';
import { measureShapes } from './shapes.ts';
import { measureThrottling } from './throttling.ts';
import {
  cliRun,
  floorBesideIdleStack,
  floorRun,
  type LetheRun,
  letheRun,
  warmUp,
} from './throughput.ts';
import { QueueTimeline } from './timeline.ts';

// The SDK's notice about future Node.js versions would print from every client, as under `npm start`.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const started = performance.now();
const log = (message: string) =>
  console.error(
    `[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`,
  );
const run = (command: string, args: string[]) => {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    return 'unavailable';
  }
};

/** Writes the report as the repository's formatter would (`npm run lint` checks Markdown too). */
const writeReport = (path: string, markdown: string) => {
  writeFileSync(path, markdown);
  try {
    execFileSync(resolve('node_modules/.bin/biome'), ['format', '--write', path], {
      stdio: 'ignore',
    });
  } catch {
    log(`could not format ${path} with Biome; run \`npm run format\` before committing it`);
  }
};

const options = parseOptions(process.argv.slice(2));
if (options.render) {
  // The measured results, rendered again (after editing bench/findings.md, say).
  const results = JSON.parse(readFileSync(options.out, 'utf8')) as Results;
  writeFileSync(options.chart, renderChart(results));
  writeReport(options.report, renderReport(results, results.options));
  log(`rendered ${options.report} and ${options.chart} from ${options.out}`);
  process.exit(0);
}
process.env.POWERTOOLS_LOG_LEVEL ??= process.env.LETHE_LOG_LEVEL ?? 'WARN';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
const region = process.env.AWS_REGION;
const settings = Object.fromEntries(
  Object.values(ENV)
    .filter((name) => process.env[name] !== undefined)
    .map((name) => [name, process.env[name]]),
);

const environment: Environment = {
  command: [
    'npm run bench',
    ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
  ].join(' '),
  node: process.version,
  moto: run('python3', ['-c', 'import moto; print(moto.__version__)']),
  awsCli: run('aws', ['--version']),
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryMB: Math.round(totalmem() / 1024 / 1024),
  loadAverage: { start: loadavg(), end: [] },
  git: {
    commit: run('git', ['rev-parse', '--short', 'HEAD']),
    modifiedFiles: run('git', ['status', '--porcelain']).split('\n').filter(Boolean).length,
  },
  seed: options.seed,
};

let emulators: Emulators | undefined;
let stack: LocalStack | undefined;
try {
  // Services apart, as on AWS and as `npm start` runs them: S3 in one moto, the rest in another.
  if (!options.endpoint) {
    emulators = await startEmulators(resolve('bench/moto_server_bulk.py'));
    log(
      `moto ${environment.moto}: S3 (pid ${emulators.s3.pid}) on ${emulators.s3.endpoint}, the other services (pid ${emulators.main.pid}) on ${emulators.main.endpoint}`,
    );
  }
  const endpoint = options.endpoint ?? (emulators as Emulators).main.endpoint;
  const s3Endpoint = options.endpoint
    ? (process.env.AWS_ENDPOINT_URL_S3 ?? options.endpoint)
    : (emulators as Emulators).s3.endpoint;
  process.env.AWS_ENDPOINT_URL = endpoint;
  process.env.AWS_ENDPOINT_URL_S3 = s3Endpoint;
  const sampler = new ResidentSampler({
    bench: 'self',
    ...(emulators ? { 'emulator (S3)': emulators.s3.pid, emulator: emulators.main.pid } : {}),
  });
  const s3 = new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, maxAttempts: 8 });
  const seeder = createSeeder(options.seed, s3Endpoint, s3);
  const pids = emulators ? [emulators.main.pid, emulators.s3.pid] : [];
  const emulatorCpu = () => {
    const seconds = pids.map((pid) => cpuSecondsOf(pid));
    return pids.length > 0 && seconds.every((value) => value !== undefined)
      ? seconds.reduce((sum: number, value) => sum + (value ?? 0), 0)
      : undefined;
  };
  const bench = {
    options,
    endpoint,
    s3Endpoint,
    s3,
    seeder,
    log,
    emulatorCpu,
    ...(emulators ? { emulatorProfile: emulatorProfiler([endpoint, s3Endpoint]) } : {}),
  };

  await createBucket(s3, 'bench-seed-rate');
  const seedRates = await measureSeedRates(
    s3,
    'bench-seed-rate',
    options.seedRateSample,
    seeder.mode === 'bulk' ? seeder : undefined,
  );
  log(`seeding: ${JSON.stringify(seedRates)}`);

  const dynamodb = new DynamoDBClient({ endpoint });
  const transactions = await probeTransactions(
    dynamodb,
    options.quick ? [0, 500] : [0, 1000, 3000],
  );
  log(`moto TransactWriteItems: ${JSON.stringify(transactions)}`);

  // Pairs, each Lethe run on a stack of its own (a fresh table: moto's transactions slow down
  // as a table's history grows) and each floor run with the emulator alone just before.
  const floor: FloorResult[] = [];
  const lethe: LetheRun[] = [];
  const counter = new RequestCounter();
  const timeline = new QueueTimeline();
  counter.observe(timeline.observe);
  let context: StackContext | undefined;
  for (let run = 0; run < options.repeats; run++) {
    floor.push(await floorRun(bench, run));
    stack = await LocalStack.start({
      endpoint,
      s3Endpoint,
      port: 0,
      namePrefix: `bench-${run}`,
      settings,
      ...(options.workerConcurrency ? { workerConcurrency: options.workerConcurrency } : {}),
      wrapClients: (clients) => counter.attach(clients),
      log,
    });
    context = stackContext(bench, stack, counter, timeline);
    await warmUp(context);
    lethe.push(await letheRun(context, run));
    log(
      `run ${run + 1}/${options.repeats}: floor ${floor.at(-1)?.objectsPerSecond.toFixed(0)} objects/s, Lethe ${lethe.at(-1)?.objectsPerSecond.toFixed(0)} objects/s`,
    );
    if (run < options.repeats - 1) {
      await stack.stop();
      stack = undefined;
    }
  }
  if (!stack || !context) throw new Error('no run');
  const beside = await floorBesideIdleStack(context, options.repeats);
  log(`floor beside the idle stack: ${beside.floor.objectsPerSecond.toFixed(0)} objects/s`);
  const acknowledgement = await measureAcknowledgement(context);
  const shapes = await measureShapes(context);
  const history = await tableHistory(dynamodb, endpoint, stack.resources.tableName);
  await stack.stop();
  stack = undefined;
  // The key budget at half of what Lethe reached unbudgeted (in whole hundreds), on a stack of
  // its own: the whole pipeline's sustained rate against it.
  const unbudgeted = [...lethe].sort((a, b) => a.objectsPerSecond - b.objectsPerSecond);
  const medianRate = unbudgeted[Math.floor((unbudgeted.length - 1) / 2)]?.objectsPerSecond ?? 0;
  const budget = await measureBudget(
    bench,
    { counter, timeline, settings },
    Math.max(100, Math.round(medianRate / 2 / 100) * 100),
  );
  // S3's SlowDown in simulation: R = 70 keys a second per partition over 10 partitions, pages
  // of 100 keys (0.7 pages a second a partition), 60 pages a partition.
  const throttling = options.quick
    ? undefined
    : await measureThrottling(
        bench,
        { counter, timeline, settings },
        { keysPerSecond: 70, pageSize: 100, objects: 60_000, partitions: 10 },
      );

  // The CLI runs for minutes, long enough for the shared machine's speed to drift: a floor run
  // just before it and one just after pair it with the floor, as each Lethe run is paired.
  let cli: Awaited<ReturnType<typeof cliRun>> | undefined;
  let cliError: string | undefined;
  const floorAroundCli: FloorResult[] = [];
  if (!options.skipCli) floorAroundCli.push(await floorRun(bench, options.repeats + 1));
  for (let attempt = 1; !options.skipCli && !cli && attempt <= 2; attempt++) {
    try {
      cli = await cliRun(bench);
    } catch (error) {
      cliError = (error as Error).message;
      log(`aws s3 rm, attempt ${attempt}: ${cliError}`);
    }
  }
  if (cli) floorAroundCli.push(await floorRun(bench, options.repeats + 2));
  const heap = await probeWorkerHeap(
    { endpoint, s3Endpoint },
    {
      objects: options.heapObjects,
      batch: options.heapBatch,
      seed: options.seed,
      region,
    },
  );
  log(`worker heap: ${heap.page.peakAboveIdleMB.toFixed(1)} MB above idle on one page`);
  const peakRssMB = sampler.stop();
  environment.loadAverage.end = loadavg();

  const results = assemble({
    environment,
    options,
    stack: stackSettings(context.stack.resources.eventSources, options.workerConcurrency, settings),
    seedRates,
    floor,
    lethe,
    floorBesideIdleStack: beside,
    ...(cli ? { cli, floorAroundCli } : cliError ? { cliError } : {}),
    acknowledgement,
    shapes,
    budget,
    ...(throttling ? { throttling } : {}),
    heap,
    transactions,
    tableHistory: history,
    peakRssMB,
    durationSeconds: (performance.now() - started) / 1000,
  });
  for (const file of [options.out, options.report, options.chart]) {
    mkdirSync(dirname(file), { recursive: true });
  }
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(options.chart, renderChart(results));
  writeReport(options.report, renderReport(results, options));
  log(`wrote ${options.out}, ${options.chart} and ${options.report}`);
  for (const target of results.targets) {
    const verdict = target.met === undefined ? 'n/a ' : target.met ? 'met ' : 'MISS';
    log(`${verdict} ${target.name}: ${target.value} (target ${target.target})`);
  }
} finally {
  await stack?.stop();
  await emulators?.stop();
}

/** What the deployed stack is configured with, read from the synthesized template. */
function stackSettings(
  eventSources: LocalStack['resources']['eventSources'],
  localConcurrency: number | undefined,
  overrides: Record<string, string | undefined>,
): StackSettings {
  const template = synthesizeTemplate();
  const worker = resourcesOfType(template, 'AWS::Lambda::Function').find(
    ({ resource }) => resource.Metadata?.['lethe:entry'] === 'functions/worker.ts',
  );
  const queue = eventSources.find((source) => source.kind === 'sqs');
  return {
    workerMemoryMB: Number(worker?.properties.MemorySize ?? 128),
    workerTimeoutSeconds: Number(worker?.properties.Timeout ?? 3),
    batchSize: queue?.batchSize ?? 10,
    maxConcurrency: queue?.maxConcurrency ?? 5,
    localConcurrency: localConcurrency ?? queue?.maxConcurrency ?? 5,
    pageSize: Number(overrides[ENV.pageSize] ?? 1000),
    settings: overrides,
  };
}
