import { createHttpApi } from './api/http-api.ts';
import type { Clients } from './clients.ts';
import type { LetheConfig } from './config.ts';
import { Dispatcher } from './dispatch.ts';
import { Finalizer } from './finalizer.ts';
import { EventWriter } from './ingest.ts';
import { ObservedProgressStore } from './observed-progress.ts';
import { PageDeleter } from './page-deleter.ts';
import { PageWorker } from './page-worker.ts';
import { StreamRegistry } from './registry.ts';
import { Sweeper } from './sweeper.ts';
import { documentClient } from './table.ts';
import { WorkQueue } from './work-queue.ts';

export interface PipelineOptions {
  config: LetheConfig;
  clients: Clients;
  now?: () => Date;
  onUnexpectedError?: (error: unknown) => void;
}

/** Wires the domain together once; each handler uses the part it needs. */
export function createPipeline({ config, clients, now, onUnexpectedError }: PipelineOptions) {
  const table = documentClient(clients.dynamodb);
  const clock = now ? { now } : {};
  const registry = new StreamRegistry({
    tableName: config.tableName,
    bucket: config.bucket,
    root: config.dataRoot,
    client: table,
    retryAfterSeconds: config.retryAfterSeconds,
    ...clock,
  });
  // Reports each deletion's end (and its duration) to the invocation's logs and metrics.
  const store = new ObservedProgressStore({
    tableName: config.tableName,
    client: table,
    receiptRetentionDays: config.receiptRetentionDays,
    ...clock,
  });
  const queue = new WorkQueue({ client: clients.sqs, queueUrl: config.queueUrl });
  const finalizer = new Finalizer({
    store,
    s3: clients.s3,
    queue,
    ingestGraceSeconds: config.ingestGraceSeconds,
    maxRounds: config.maxRounds,
    ...clock,
  });
  const dispatcher = new Dispatcher({
    store,
    s3: clients.s3,
    queue,
    finalizer,
    detectVersioning: config.bucketVersioning === 'auto',
  });
  const worker = new PageWorker({
    store,
    s3: clients.s3,
    deleter: new PageDeleter({ client: clients.s3 }),
    queue,
    finalizer,
    pageSize: config.pageSize,
    // Well inside the sweeper's threshold, so a deletion that moves is never taken for stalled.
    heartbeatSeconds: Math.max(1, Math.floor(config.staleAfterSeconds / 3)),
  });
  const sweeper = new Sweeper({
    store,
    queue,
    dispatcher,
    finalizer,
    staleAfterSeconds: config.staleAfterSeconds,
    maxAttempts: config.maxAttempts,
    ...clock,
  });
  const writer = new EventWriter({
    client: clients.s3,
    // An admitted write is abandoned well inside the grace a deletion allows it.
    timeoutMs: Math.max(1_000, config.ingestGraceSeconds * 700),
    ...clock,
  });
  const api = createHttpApi({
    registry,
    writer,
    maxEventsBytes: config.maxEventsBytes,
    ...(onUnexpectedError ? { onUnexpectedError } : {}),
  });
  return { registry, store, queue, finalizer, dispatcher, worker, sweeper, writer, api };
}

export type Pipeline = ReturnType<typeof createPipeline>;
