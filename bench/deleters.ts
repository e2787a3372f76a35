import { spawn } from 'node:child_process';
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { ApiClient } from '../test/helpers/http.ts';

/** One deletion of one copy, by one of the three contenders. */
export interface RunResult {
  objects: number;
  /** Milliseconds from the first request to the last object gone. */
  ms: number;
  objectsPerSecond: number;
  /** CPU seconds the emulator spent meanwhile (all of its work, idle polling included). */
  emulatorCpuSeconds?: number;
  /** CPU seconds of the benchmark process meanwhile (for Lethe: the local stack's handlers). */
  localCpuSeconds?: number;
  /** The emulator's CPU by operation meanwhile (bench/moto_server_bulk.py). */
  emulatorProfile?: Record<string, { count: number; cpuSeconds: number }>;
}

export interface FloorResult extends RunResult {
  lists: number;
  deletes: number;
  listMs: number;
  deleteMs: number;
}

/**
 * The emulator's floor: one client, one request at a time, ListObjectsV2 (1,000 keys) then
 * DeleteObjects of what it listed, until the listing is empty. Nothing is recorded anywhere.
 */
export async function floorDelete(
  s3: S3Client,
  bucket: string,
  prefix: string,
): Promise<FloorResult> {
  const started = performance.now();
  const result = { objects: 0, lists: 0, deletes: 0, listMs: 0, deleteMs: 0 };
  for (;;) {
    const listStarted = performance.now();
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: 1000 }),
    );
    const deleteStarted = performance.now();
    result.lists += 1;
    result.listMs += deleteStarted - listStarted;
    const keys = (page.Contents ?? []).map((object) => ({ Key: object.Key ?? '' }));
    if (keys.length === 0) break;
    const { Errors = [] } = await s3.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }),
    );
    result.deletes += 1;
    result.deleteMs += performance.now() - deleteStarted;
    if (Errors.length > 0) throw new Error(`floor: ${Errors.length} keys failed to delete`);
    result.objects += keys.length;
    // The last page needs no empty listing after it: the floor does no verification.
    if (!page.IsTruncated) break;
  }
  const ms = performance.now() - started;
  return { ...result, ms, objectsPerSecond: result.objects / (ms / 1000) };
}

export interface CliResult extends RunResult {
  command: string;
  exitCode: number | null;
}

/** `aws s3 rm --recursive` on a copy: one DeleteObject per key, the CLI's own concurrency. */
export async function cliDelete(
  endpoint: string,
  bucket: string,
  prefix: string,
  objects: number,
): Promise<CliResult> {
  const args = [
    's3',
    'rm',
    `s3://${bucket}/${prefix}`,
    '--recursive',
    '--only-show-errors',
    '--endpoint-url',
    endpoint,
  ];
  // moto answers 500 now and then when a listing races a delete in the same bucket (it copies
  // the key index, then reads keys that may be gone): retry as the SDK clients of Lethe do.
  const retries = { AWS_RETRY_MODE: 'standard', AWS_MAX_ATTEMPTS: '10' };
  const started = performance.now();
  const child = spawn('aws', args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      ...retries,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_DEFAULT_REGION: 'us-east-1',
    },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  const ms = performance.now() - started;
  if (exitCode !== 0) throw new Error(`aws s3 rm exited with ${exitCode}: ${stderr}`);
  return {
    command: `${Object.entries(retries)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')} aws ${args.join(' ')}`,
    exitCode,
    objects,
    ms,
    objectsPerSecond: objects / (ms / 1000),
  };
}

/** The part of a deletion record the benchmark watches. */
export interface DeletionView {
  state: string;
  round?: number;
  attempts?: number;
  objectsDeleted: number;
  requestedAt: string;
  completedAt?: string;
}

export interface LetheResult extends RunResult {
  deletionId: string;
  /** DELETE round trip as the client saw it. */
  ackMs: number;
  /** DELETE sent to COMPLETED observed (polled every `pollMs`). */
  wallMs: number;
  requestedAt: string;
  completedAt: string;
  /** Rounds of verification the deletion took (1 when the first listing came back empty). */
  rounds: number;
}

/**
 * DELETE through the API, then watch the deletion record until it is COMPLETED. Throughput
 * counts from the record's own `requestedAt` to its `completedAt` (Lethe's clock, the same
 * machine); the wall clock is kept beside it.
 */
export async function letheDelete(
  api: ApiClient,
  tenant: string,
  stream: string,
  readDeletion: (tenant: string, deletionId: string) => Promise<DeletionView | undefined>,
  { pollMs = 50, timeoutMs = 600_000 } = {},
): Promise<LetheResult> {
  const started = performance.now();
  const reply = await api.delete(tenant, stream);
  const ackMs = performance.now() - started;
  if (reply.status !== 202) {
    throw new Error(`DELETE ${tenant}/${stream}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const deletionId = String(reply.body.deletionId);
  for (;;) {
    const deletion = await readDeletion(tenant, deletionId);
    if (deletion?.state === 'COMPLETED' && deletion.completedAt) {
      const wallMs = performance.now() - started;
      const ms = Date.parse(deletion.completedAt) - Date.parse(deletion.requestedAt);
      return {
        deletionId,
        objects: deletion.objectsDeleted,
        ms,
        objectsPerSecond: deletion.objectsDeleted / (ms / 1000),
        ackMs,
        wallMs,
        requestedAt: deletion.requestedAt,
        completedAt: deletion.completedAt,
        rounds: deletion.round ?? 1,
      };
    }
    if (deletion?.state === 'FAILED') {
      throw new Error(`deletion ${deletionId} FAILED: ${JSON.stringify(deletion)}`);
    }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`deletion ${deletionId} not COMPLETED after ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
