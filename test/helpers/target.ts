import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { LocalStack, type LocalStackOptions } from '../../lib/local/local-stack.ts';
import type { Clients } from '../../lib/support/index.ts';

export interface TestTarget {
  baseUrl: string;
  s3: S3Client;
  /** The in-process local stack, when the suite runs against one. */
  local?: LocalStack;
  stop(): Promise<void>;
}

/** Settings that make the local pipeline quick to observe in tests. */
export const FAST_SETTINGS = {
  // Stale after a few seconds on a loaded machine means many resumes; the stall limit
  // (FAILED after N attempts) is tested on its own.
  LETHE_MAX_ATTEMPTS: '50',
  LETHE_STALE_AFTER_SECONDS: '5',
  LETHE_RETRY_AFTER_SECONDS: '2',
};

/**
 * LETHE_TEST_AWS_MODEL=1 (`npm run test:aws-model`): every local stack a test starts models what
 * Lambda does and the runtime does not by default: loop detection by each function's
 * RecursiveLoop, and an account of 16 concurrent executions (the least the stack deploys in,
 * with 2 workers and 2 planners) that throttles above it. The launcher's fault modes come with
 * LETHE_MOTO_FAULTS, which the suite's emulators read from the environment.
 */
const awsModel = () => /^(1|true|yes)$/i.test(process.env.LETHE_TEST_AWS_MODEL ?? '');
const AWS_MODEL = {
  loopDetection: true,
  accountConcurrency: 16,
  stackProps: { accountConcurrency: 16, workerConcurrency: 2 },
} satisfies LocalStackOptions;

/**
 * Where the integration suite runs: the API at LETHE_TEST_API_URL (a LocalStack or real
 * deployment) if set, otherwise a fresh local stack in this process over the suite's emulator,
 * with its own resource names so test files never share state.
 */
export async function startTarget(options: LocalStackOptions = {}): Promise<TestTarget> {
  const s3 = new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL) });
  const remote = process.env.LETHE_TEST_API_URL;
  if (remote) return { baseUrl: remote.replace(/\/$/, ''), s3, stop: async () => {} };
  const local = await LocalStack.start({
    port: 0,
    namePrefix: `t${randomUUID().slice(0, 8)}`,
    sweepIntervalSeconds: 1,
    visibilityTimeoutSeconds: 5,
    ...(awsModel() ? AWS_MODEL : {}),
    ...options,
    settings: { ...FAST_SETTINGS, ...options.settings },
  });
  return {
    baseUrl: local.url,
    s3: new S3Client({ forcePathStyle: true }),
    local,
    stop: () => local.stop(),
  };
}

/**
 * A `wrapClients` that keeps the body of every message the pipeline's functions send in
 * batches (work pages, plan pages) in `sent`, for a test to replay.
 */
export const capturingSends =
  (sent: string[]) =>
  (clients: Clients): Clients => {
    clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageBatchCommand') {
          for (const entry of (args.input as SendMessageBatchCommandInput).Entries ?? []) {
            if (entry.MessageBody) sent.push(entry.MessageBody);
          }
        }
        return next(args);
      },
      { step: 'initialize', name: 'captureSends' },
    );
    return clients;
  };
