/**
 * The worker's heap, measured alone: run by bench/memory.ts as
 * `node --expose-gc --import tsx bench/worker-heap.ts` against the benchmark's emulator, with
 * the environment of the worker function in BENCH_WORKER_ENV. It prepares deletions with the
 * pipeline itself, takes their first page messages off the queue, then invokes the real worker
 * handler on them while sampling the heap. Prints one JSON line.
 */
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { createWorkerHandler as createHandler } from '#lib/lambda/worker.ts';
import { createPipeline } from '#lib/pipeline/index.ts';
import { createClients, loadConfig } from '#lib/support/index.ts';
import { createSeeder, layout, type SeedMode } from './seeding.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const env = { ...process.env, ...JSON.parse(process.env.BENCH_WORKER_ENV ?? '{}') };
const objectsPerPartition = Number(process.env.BENCH_HEAP_OBJECTS ?? 1500);
const batch = Number(process.env.BENCH_HEAP_BATCH ?? 5);
const seedMode = (process.env.BENCH_SEED ?? 'bulk') as SeedMode;

const clients = createClients({ forcePathStyle: true });
const config = loadConfig(env);
const pipeline = createPipeline({ config, clients });
const handler = createHandler(env, clients);
const seeder = createSeeder(
  seedMode,
  String(env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL),
  clients.s3,
);
const MB = 1024 * 1024;

let peakHeap = 0;
let peakRss = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakHeap = Math.max(peakHeap, usage.heapUsed);
  peakRss = Math.max(peakRss, usage.rss);
};
// Around every request: the heap peaks as a 1,000-key response is parsed or a request built.
for (const client of [clients.s3, clients.s3Deletes, clients.dynamodb, clients.sqs]) {
  (client.middlewareStack as unknown as { add: (...args: unknown[]) => void }).add(
    (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
      sample();
      const result = await next(args);
      sample();
      return result;
    },
    { step: 'deserialize', name: 'benchHeapSample' },
  );
}

/** CPU spent inside each kind of SDK call (serialising, signing, parsing), while measuring. */
let cpuByCommand: Record<string, { calls: number; cpuMs: number }> | undefined;
for (const client of [clients.s3, clients.s3Deletes, clients.dynamodb, clients.sqs]) {
  (client.middlewareStack as unknown as { add: (...args: unknown[]) => void }).add(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: unknown) => {
        const before = process.cpuUsage();
        try {
          return await next(args);
        } finally {
          const used = process.cpuUsage(before);
          const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
          if (cpuByCommand) {
            cpuByCommand[command] ??= { calls: 0, cpuMs: 0 };
            cpuByCommand[command].calls += 1;
            cpuByCommand[command].cpuMs += (used.user + used.system) / 1000;
          }
        }
      },
    { step: 'initialize', name: 'benchCpuPerCommand' },
  );
}

/** A deletion of `partitions` partitions, dispatched: its first page messages are queued. */
async function prepare(name: string, partitions: number): Promise<Message[]> {
  const { stream } = await pipeline.streams.create('heap', name);
  await seeder.seed(
    stream.bucket,
    layout(stream.prefix, partitions * objectsPerPartition, partitions),
  );
  const { deletion } = await pipeline.deletions.request('heap', name);
  await pipeline.dispatcher.dispatch({
    tenant: deletion.tenant,
    deletionId: deletion.deletionId,
    round: deletion.round,
  });
  const messages: Message[] = [];
  while (messages.length < partitions) {
    const { Messages = [] } = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: config.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    messages.push(...Messages.filter((message) => message.Body?.includes(deletion.deletionId)));
  }
  return messages;
}

const eventOf = (messages: Message[]): SQSEvent => ({
  Records: messages.map((message) => ({
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: message.Attributes as unknown as SQSEvent['Records'][number]['attributes'],
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:heapprobe-work',
    awsRegion: 'us-east-1',
  })),
});

/** One invocation on `records` first pages, the heap sampled throughout. */
async function measure(name: string, records: number) {
  const messages = await prepare(name, records);
  gc?.();
  gc?.();
  const idle = process.memoryUsage();
  peakHeap = idle.heapUsed;
  peakRss = idle.rss;
  const timer = setInterval(sample, 1);
  cpuByCommand = {};
  const cpu = process.cpuUsage();
  const started = performance.now();
  const response = (await handler(eventOf(messages))) as { batchItemFailures?: unknown[] };
  const ms = performance.now() - started;
  const cpuUsed = process.cpuUsage(cpu);
  const perCommand = cpuByCommand;
  cpuByCommand = undefined;
  clearInterval(timer);
  sample();
  gc?.();
  const after = process.memoryUsage();
  return {
    records,
    keysPerRecord: Math.min(1000, objectsPerPartition),
    failures: response?.batchItemFailures?.length ?? 0,
    idleHeapMB: idle.heapUsed / MB,
    peakHeapMB: peakHeap / MB,
    peakAboveIdleMB: (peakHeap - idle.heapUsed) / MB,
    retainedMB: (after.heapUsed - idle.heapUsed) / MB,
    idleRssMB: idle.rss / MB,
    peakRssMB: peakRss / MB,
    ms,
    cpuMs: (cpuUsed.user + cpuUsed.system) / 1000,
    cpuByCommand: perCommand,
  };
}

// The first invocation compiles and loads what the handler needs: not what a page costs.
await measure('warm-up', 1);
const page = await measure('page', 1);
const batchRun = await measure('batch', batch);
console.log(JSON.stringify({ page, batch: batchRun }));
