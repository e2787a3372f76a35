import type { S3Client } from '@aws-sdk/client-s3';
import type { DeletionRecord, FailureReason, WorkMessage } from '../core/index.ts';
import type { PageDeleter } from '../s3/index.ts';
import type {
  ChainStore,
  DeletionIndex,
  DeletionStore,
  FailureStore,
  StreamStore,
  UploadStore,
} from '../store/index.ts';

/**
 * What the pipeline's steps need from the layers below, as narrow types: each step names the
 * methods it calls, so a test's fake is checked against exactly those.
 */
export type Deletions<K extends keyof DeletionStore> = Pick<DeletionStore, K>;
export type Chains<K extends keyof ChainStore> = Pick<ChainStore, K>;
export type Index<K extends keyof DeletionIndex> = Pick<DeletionIndex, K>;
export type Streams<K extends keyof StreamStore> = Pick<StreamStore, K>;
export type Failures<K extends keyof FailureStore> = Pick<FailureStore, K>;
export type Uploads<K extends keyof UploadStore> = Pick<UploadStore, K>;
export type Deleter = Pick<PageDeleter, 'deletePage'>;

export interface WorkSender {
  send(messages: WorkMessage[], delaySeconds?: number): Promise<void>;
}

/** S3 as the pipeline reads it: the one client, its listings made by lib/s3. */
export type ObjectStore = S3Client;

/**
 * What happened to deletions, for whoever watches: the Lambda functions log it and count it
 * in their metrics. Each is called once per change, by the conditional write that made it.
 */
export interface DeletionEvents {
  /** The deletion ended COMPLETED or FAILED, `seconds` after it was requested. */
  ended(deletion: DeletionRecord, seconds: number, reason?: FailureReason): void;
  /** The sweeper resumed a deletion that made no progress since `lastProgress`. */
  resumed(deletion: DeletionRecord, lastProgress: string): void;
}

/** Events that go nowhere: for scripts and tests that do not watch. */
export const unobserved: DeletionEvents = { ended: () => {}, resumed: () => {} };
