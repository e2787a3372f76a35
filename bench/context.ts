import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalStack } from '#lib/local/local-stack.ts';
import { documentClient, keys, LIST_INDEX } from '#lib/store/index.ts';
import { type ApiClient, apiClient, parseLocation } from '../test/helpers/http.ts';
import { listAll } from '../test/helpers/s3.ts';
import type { RequestCounter } from './counting.ts';
import type { DeletionView } from './deleters.ts';
import type { BenchOptions } from './options.ts';
import { layout, type Seeder, type SeedObject } from './seeding.ts';
import type { QueueTimeline } from './timeline.ts';

/** What every phase of the benchmark works with. */
export interface BenchContext {
  readonly options: BenchOptions;
  /** DynamoDB, its streams, SQS and the rest. */
  readonly endpoint: string;
  /** S3, in an emulator of its own when the benchmark started them. */
  readonly s3Endpoint: string;
  /** A client of its own (not counted): seeding, the floor, checks. */
  readonly s3: S3Client;
  readonly seeder: Seeder;
  readonly log: (message: string) => void;
  /** CPU seconds the emulator has used so far, when the benchmark started it. */
  readonly emulatorCpu: () => number | undefined;
  /** Its CPU by operation since the last call (bench/moto_server_bulk.py), when available. */
  readonly emulatorProfile?: () => Promise<EmulatorProfile>;
}

export type EmulatorProfile = Record<string, { count: number; cpuSeconds: number }>;

/** Reads (and restarts) the CPU per operation of each bench/moto_server_bulk.py, merged. */
export const emulatorProfiler = (endpoints: string[]) => async (): Promise<EmulatorProfile> => {
  const profiles = await Promise.all(
    endpoints.map(async (endpoint) => {
      const response = await fetch(`${endpoint}/_bench/cpu`, { method: 'POST' });
      if (!response.ok) throw new Error(`emulator profile: ${response.status}`);
      return (await response.json()) as EmulatorProfile;
    }),
  );
  const merged: EmulatorProfile = {};
  for (const [operation, { count, cpuSeconds }] of profiles.flatMap((p) => Object.entries(p))) {
    const sum = merged[operation] ?? { count: 0, cpuSeconds: 0 };
    merged[operation] = { count: sum.count + count, cpuSeconds: sum.cpuSeconds + cpuSeconds };
  }
  return merged;
};

/** Runs `work`, and says how much CPU the emulator and this process spent on it. */
export async function metered<T>(
  context: BenchContext,
  work: () => Promise<T>,
): Promise<
  T & { emulatorCpuSeconds?: number; localCpuSeconds: number; emulatorProfile?: EmulatorProfile }
> {
  await context.emulatorProfile?.();
  const emulatorBefore = context.emulatorCpu();
  const localBefore = process.cpuUsage();
  const result = await work();
  const local = process.cpuUsage(localBefore);
  const emulatorAfter = context.emulatorCpu();
  const profile = await context.emulatorProfile?.();
  return {
    ...result,
    ...(profile ? { emulatorProfile: profile } : {}),
    ...(emulatorBefore !== undefined && emulatorAfter !== undefined
      ? { emulatorCpuSeconds: emulatorAfter - emulatorBefore }
      : {}),
    localCpuSeconds: (local.user + local.system) / 1e6,
  };
}

/** The local stack's part: its API, its counted clients, and a reader of deletion records. */
export interface StackContext extends BenchContext {
  readonly stack: LocalStack;
  readonly api: ApiClient;
  readonly counter: RequestCounter;
  readonly timeline: QueueTimeline;
  readDeletion(tenant: string, deletionId: string): Promise<DeletionView | undefined>;
  /**
   * Waits until every one of a tenant's `deletionIds` is COMPLETED and returns their records.
   * One query of the tenant's list index a poll, however many deletions are watched: a reader
   * per deletion would load the emulator in proportion to their number and slow what it times.
   */
  /** `since`: no deletion watched was requested before it, so none before it is read. */
  watchDeletions(tenant: string, deletionIds: string[], since?: Date): Promise<DeletionView[]>;
}

export const TENANT = 'bench';

export function stackContext(
  bench: BenchContext,
  stack: LocalStack,
  counter: RequestCounter,
  timeline: QueueTimeline,
): StackContext {
  // Watching the deletion is the benchmark's own business: its reads are not counted.
  const table = documentClient(new DynamoDBClient({ endpoint: bench.endpoint }));
  return {
    ...bench,
    stack,
    api: apiClient(stack.url),
    counter,
    timeline,
    async readDeletion(tenant, deletionId) {
      const { Item } = await table.send(
        new GetCommand({
          TableName: stack.resources.tableName,
          Key: keys.deletion(tenant, deletionId),
          ConsistentRead: true,
        }),
      );
      return Item as DeletionView | undefined;
    },
    async watchDeletions(tenant, deletionIds, since) {
      const waiting = new Set(deletionIds);
      const started = performance.now();
      while (waiting.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, WATCH_POLL_MS));
        const listed = listedDeletions(table, stack.resources.tableName, tenant, since);
        for await (const item of listed) {
          if (!waiting.has(item.deletionId)) continue;
          if (item.state === 'FAILED') throw new Error(`deletion ${item.deletionId} FAILED`);
          if (item.state === 'COMPLETED') waiting.delete(item.deletionId);
        }
        if (performance.now() - started > WATCH_TIMEOUT_MS) {
          throw new Error(`${waiting.size} deletions not COMPLETED after ${WATCH_TIMEOUT_MS} ms`);
        }
      }
      const records = await Promise.all(
        deletionIds.map((deletionId) => this.readDeletion(tenant, deletionId)),
      );
      return records.filter((record): record is DeletionView => record?.state === 'COMPLETED');
    },
  };
}

/**
 * A tenant's deletions as the list index holds them (keys and state), every page of it: one
 * query a page, however many deletions a watcher waits for.
 */
export async function* listedDeletions(
  table: DynamoDBDocumentClient,
  tableName: string,
  tenant: string,
  since?: Date,
): AsyncGenerator<{ deletionId: string; state: string }> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: LIST_INDEX,
        // The list index sorts a tenant's deletions by when they were requested.
        KeyConditionExpression: since
          ? 'listPk = :tenant AND listSk >= :since'
          : 'listPk = :tenant',
        ExpressionAttributeValues: {
          ':tenant': `TENANT#${tenant}`,
          ...(since ? { ':since': since.toISOString() } : {}),
        },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) yield item as { deletionId: string; state: string };
    start = page.LastEvaluatedKey;
  } while (start);
}

const WATCH_POLL_MS = 100;
const WATCH_TIMEOUT_MS = 600_000;

/**
 * Creates a stream through the API and seeds its location with `objects` over `partitions`
 * (or with `copy`, keys relative to `copyPrefix`, for an identical copy).
 */
export async function seededStream(
  context: StackContext,
  stream: string,
  objects: number,
  partitions: number,
): Promise<{ bucket: string; prefix: string; objects: SeedObject[] }> {
  const created = await context.api.create(TENANT, stream);
  if (created.status !== 201) {
    throw new Error(`PUT ${stream}: ${created.status} ${JSON.stringify(created.body)}`);
  }
  const { bucket, prefix } = parseLocation(String(created.body.location));
  const seeded = layout(prefix, objects, Math.min(partitions, objects));
  await context.seeder.seed(bucket, seeded);
  return { bucket, prefix, objects: seeded };
}

/** Fails the run if anything is left under a prefix a contender was to empty. */
export async function assertEmpty(s3: S3Client, bucket: string, prefix: string, who: string) {
  const left = await listAll(s3, bucket, prefix);
  if (left.size > 0) throw new Error(`${who} left ${left.size} objects under ${prefix}`);
}
