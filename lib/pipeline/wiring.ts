import { EventBus } from '../bus/index.ts';
import { type Clock, type PlanPageMessage, systemClock } from '../core/index.ts';
import { WorkQueue } from '../queue/index.ts';
import { EventWriter, PageDeleter } from '../s3/index.ts';
import {
  BudgetStore,
  ChainStore,
  DeletionIndex,
  DeletionStore,
  documentClient,
  FailureStore,
  OffboardingStore,
  PlanStore,
  StreamStore,
  Table,
  UploadStore,
} from '../store/index.ts';
import type { Clients, LetheConfig } from '../support/index.ts';
import { KeyBudget } from './budget.ts';
import { Dispatcher } from './dispatcher.ts';
import { DeletionFence } from './fence.ts';
import { Finalizer } from './finalizer.ts';
import { Offboarder } from './offboarder.ts';
import { PageWorker } from './page-worker.ts';
import { PlanSweeper } from './plan-sweeper.ts';
import { Planner } from './planner.ts';
import { type DeletionEvents, unobserved } from './ports.ts';
import { StateChangePublisher } from './publisher.ts';
import { RetentionRunner } from './retention.ts';
import { Sweeper } from './sweeper.ts';

export interface PipelineOptions {
  readonly config: LetheConfig;
  readonly clients: Clients;
  readonly clock?: Clock;
  /** Who hears of deletions ending and resuming. @default nobody */
  readonly events?: DeletionEvents;
}

/** Wires the stores and the pipeline's steps together once; each function uses its part. */
export function createPipeline({
  config,
  clients,
  clock = systemClock,
  events = unobserved,
}: PipelineOptions) {
  const table = new Table(documentClient(clients.dynamodb), config.tableName);
  const offboardings = new OffboardingStore({ table, clock });
  const streams = new StreamStore({
    table,
    bucket: config.bucket,
    root: config.dataRoot,
    retryAfterSeconds: config.retryAfterSeconds,
    clock,
    offboardings,
  });
  const deletions = new DeletionStore({
    table,
    streams,
    receiptRetentionDays: config.receiptRetentionDays,
    clock,
  });
  const chains = new ChainStore({ table, deletions, clock });
  const index = new DeletionIndex({ table });
  const failures = new FailureStore({ table });
  const uploads = new UploadStore({ table });
  const queue = new WorkQueue({ client: clients.sqs, queueUrl: config.queueUrl });
  // Well inside the sweeper's threshold, so a deletion that moves is never taken for stalled;
  // a page the budget or its pace holds back comes back this often, and marks it alive.
  const heartbeatSeconds = Math.max(1, Math.floor(config.staleAfterSeconds / 3));
  const finalizer = new Finalizer({
    deletions,
    chains,
    streams,
    uploads,
    s3: clients.s3,
    queue,
    events,
    ingestGraceSeconds: config.ingestGraceSeconds,
    maxRounds: config.maxRounds,
    heartbeatSeconds,
    clock,
  });
  const worker = new PageWorker({
    chains,
    deletions,
    failures,
    fence: new DeletionFence({ deletions, intervalSeconds: heartbeatSeconds, clock }),
    s3: clients.s3,
    deleter: new PageDeleter({ client: clients.s3Deletes }),
    queue,
    finalizer,
    pageSize: config.pageSize,
    longestDelaySeconds: heartbeatSeconds,
    clock,
    ...(config.maxKeysPerSecond > 0
      ? {
          budget: new KeyBudget({
            budgets: new BudgetStore({ table }),
            keysPerSecond: config.maxKeysPerSecond,
            pageSize: config.pageSize,
            clock,
            longestWaitSeconds: heartbeatSeconds,
          }),
        }
      : {}),
  });
  const dispatching = {
    deletions,
    chains,
    s3: clients.s3,
    queue,
    finalizer,
    detectVersioning: config.bucketVersioning === 'auto',
    pageSize: config.pageSize,
  };
  // The dispatcher deletes the first page it lists; the sweeper, which dispatches only a
  // deletion whose stream record failed, deletes nothing itself (it may not): a worker does.
  const dispatcher = new Dispatcher({ ...dispatching, pages: worker });
  const sweeper = new Sweeper({
    deletions,
    index,
    chains,
    queue,
    dispatcher: new Dispatcher(dispatching),
    finalizer,
    events,
    staleAfterSeconds: config.staleAfterSeconds,
    maxAttempts: config.maxAttempts,
    clock,
  });
  const publisher = new StateChangePublisher({
    bus: new EventBus({ client: clients.eventbridge, busName: config.eventBusName }),
  });
  const retention = new RetentionRunner({ streams, deletions, clock });
  const offboarder = new Offboarder({
    offboardings,
    streams,
    deletions,
    clock,
    pageSize: config.offboardingPageSize,
    staleAfterMs: config.staleAfterSeconds * 1000,
  });
  const plans = new PlanStore({ table, clock });
  const planQueue = new WorkQueue<PlanPageMessage>({
    client: clients.sqs,
    queueUrl: config.planQueueUrl,
  });
  const planner = new Planner({
    plans,
    s3: clients.s3,
    queue: planQueue,
    pageSize: config.pageSize,
    clock,
  });
  const planSweeper = new PlanSweeper({
    plans,
    planner,
    queue: planQueue,
    staleAfterSeconds: config.staleAfterSeconds,
    maxAttempts: config.maxAttempts,
    clock,
  });
  const writer = new EventWriter({
    client: clients.s3,
    // An admitted write is abandoned well inside the grace a deletion allows it.
    timeoutMs: Math.max(1_000, config.ingestGraceSeconds * 700),
    clock,
  });
  return {
    streams,
    deletions,
    index,
    chains,
    failures,
    uploads,
    queue,
    publisher,
    finalizer,
    dispatcher,
    worker,
    sweeper,
    writer,
    plans,
    planner,
    planSweeper,
    retention,
    offboardings,
    offboarder,
  };
}

export type Pipeline = ReturnType<typeof createPipeline>;
