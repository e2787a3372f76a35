import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { LetheFunction } from './lethe-function.ts';

/** Anything a policy statement can be added to: a function, or a function's role. */
interface Grantee {
  addToRolePolicy(statement: PolicyStatement): void;
}

/** The pipeline's functions that touch stream data. */
export interface DataFunctions {
  readonly api: LetheFunction;
  readonly dispatcher: LetheFunction;
  readonly worker: LetheFunction;
  readonly sweeper: LetheFunction;
}

/** Listing stream data: ListObjectsV2, and ListObjectVersions in a versioned bucket. */
export function grantListData(fn: Grantee, bucket: IBucket, dataKeys: string) {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['s3:ListBucket', 's3:ListBucketVersions'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [dataKeys] } },
    }),
  );
}

/**
 * What each function may do to the objects under the data root, and nothing more: only the api
 * writes objects, only the worker and the dispatcher delete them, and the functions that end a
 * round verify it.
 * `ownBucket`: the stack's own bucket, which does not keep versions.
 */
export function grantDataAccess(
  { api, dispatcher, worker, sweeper }: DataFunctions,
  bucket: IBucket,
  dataKeys: string,
  ownBucket: boolean,
) {
  api.function.addToRolePolicy(
    new PolicyStatement({
      actions: ['s3:PutObject'],
      resources: [bucket.arnForObjects(dataKeys)],
    }),
  );
  // A bucket whose default encryption is SSE-KMS with a customer's key: S3 asks that key for a
  // data key on each PutObject, as the caller (reading and deleting need no key).
  bucket.encryptionKey?.grant(api.function, 'kms:GenerateDataKey');
  // DeleteObjects needs s3:DeleteObject per key, and s3:DeleteObjectVersion per version in a
  // versioned bucket; nothing else (tagging, retention) is ever deleted or changed. The worker
  // deletes pages; the dispatcher deletes the first page of a round, which it lists to lay the
  // round out. The sweeper never deletes: a round it dispatches leaves that page to a worker.
  for (const fn of [dispatcher, worker]) {
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
        resources: [bucket.arnForObjects(dataKeys)],
      }),
    );
  }
  // Verification aborts the multipart uploads in progress under the location, and checks that
  // none is left; it runs where a round ends: the worker, the dispatcher (an empty location)
  // and the sweeper (a resumed verification).
  for (const fn of [dispatcher, worker, sweeper]) {
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:ListBucketMultipartUploads'],
        resources: [bucket.bucketArn],
      }),
    );
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:AbortMultipartUpload'],
        resources: [bucket.arnForObjects(dataKeys)],
      }),
    );
  }
  // Whether the bucket keeps versions, asked when a deletion is dispatched (the sweeper too
  // dispatches one that never was).
  for (const fn of [dispatcher, sweeper]) {
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:GetBucketVersioning'],
        resources: [bucket.bucketArn],
      }),
    );
    // The stack's own bucket does not keep versions: no need to ask per deletion (if someone
    // turns versioning on, verification still finds the versions and deletes them).
    if (ownBucket) fn.configure('bucketVersioning', 'off');
  }
}
