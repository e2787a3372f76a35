/**
 * What a deletion costs and how long it takes, estimated from a plan's exact counts. Every
 * price and rate Lethe assumes is written here, once (the README shows this table): on-demand
 * list prices of us-east-1, December 2026, without free tiers. Change them here for another
 * region or a negotiated price.
 */
export const PRICES = {
  /** S3 Standard: LIST and POST-class requests (DeleteObjects is a POST), per request. */
  s3ListOrPostRequest: 0.005 / 1000,
  /** S3: DELETE requests (AbortMultipartUpload) are free. */
  s3DeleteRequest: 0,
  /** SQS standard queue, per request (send, receive and delete of each message). */
  sqsRequest: 0.4 / 1_000_000,
  /** DynamoDB on-demand, per write request unit (a transactional write takes two). */
  dynamodbWriteUnit: 0.625 / 1_000_000,
  /** Lambda on arm64, per GB-second, and per request. */
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1_000_000,
} as const;

export const RATES = {
  /** Memory of the worker function (the stack's), in GB. */
  workerMemoryGb: 1769 / 1024,
  /** Seconds one worker spends on a page of 1,000 keys: one list, one DeleteObjects, two writes. */
  secondsPerPage: 0.5,
  /** S3's documented limit: DELETE requests per second per partitioned prefix. */
  s3DeletesPerSecondPerPrefix: 3500,
  /** Pages of one chain in flight at once (the next page is handed on before a page deletes). */
  pagesInFlightPerChain: 2,
  /** DynamoDB write units per page: the listing recorded, the page counted. */
  writesPerPage: 2,
  /** Per chain: registered, then settled in a two-item transaction (two units each). */
  writesPerChain: 5,
  /** Per deletion: tombstone (two-item transaction), start, verification claim, completion. */
  writesPerDeletion: 8,
} as const;

/**
 * How full a chain over a run of small child prefixes should expect its page to be: below 1, so
 * a run a little larger than its sample suggested still lists in one page. The dispatcher lays
 * out such runs with it (lib/pipeline/chain-layout.ts), and a plan estimates with it.
 */
export const RUN_FILL = 0.8;

/**
 * The pages and chains of the deletion a plan previews, from what the plan counted (`pages` and
 * `chains`: one chain per child prefix; `entries`: versions and delete markers). A deletion
 * takes a location that lists in one page as one chain, and small children in runs of about a
 * page (RUN_FILL): where children fill pages its pages are the plan's, and where they hold a few
 * keys each (a year of small daily partitions), far fewer than one per child.
 */
export function deletionLayoutOf(
  counted: { pages: number; chains: number; entries: number },
  pageSize: number,
): { pages: number; chains: number } {
  if (counted.entries === 0) return { pages: 0, chains: 0 };
  if (counted.entries <= pageSize) return { pages: 1, chains: 1 };
  const pages = Math.min(counted.pages, Math.ceil(counted.entries / (RUN_FILL * pageSize)));
  return { pages, chains: Math.max(1, Math.min(counted.chains, pages)) };
}

export interface EstimateInput {
  /** Entries the deletion removes: object versions and delete markers (objects, unversioned). */
  entries: number;
  /** Listing pages of `pageSize` entries, over every chain. */
  pages: number;
  chains: number;
  multipartUploads: number;
  /** Most worker invocations at once (the stack's `workerConcurrency`). */
  workerConcurrency: number;
  /** The bucket's key budget (`LETHE_MAX_KEYS_PER_SECOND`); absent or 0: none. */
  maxKeysPerSecond?: number;
}

export interface Estimate {
  s3Requests: number;
  sqsMessages: number;
  dynamodbWrites: number;
  lambdaGbSeconds: number;
  costUsd: number;
  seconds: number;
}

/** The deletion of what a plan counted: requests of each service, dollars and seconds. */
export function estimateDeletion(input: EstimateInput): Estimate {
  const { pages, chains, multipartUploads } = input;
  // Dispatch lists the children; verification lists versions and uploads once.
  const listRequests = pages + Math.max(1, Math.ceil(chains / 1000)) + 2;
  const deleteObjectsRequests = pages;
  const s3Requests = listRequests + deleteObjectsRequests + multipartUploads;
  // One message per page, and one to finalize.
  const sqsMessages = pages + 1;
  const dynamodbWrites =
    pages * RATES.writesPerPage + chains * RATES.writesPerChain + RATES.writesPerDeletion;
  const invocations = pages + 2;
  const lambdaGbSeconds = round(pages * RATES.secondsPerPage * RATES.workerMemoryGb, 3);
  const costUsd =
    (listRequests + deleteObjectsRequests) * PRICES.s3ListOrPostRequest +
    multipartUploads * PRICES.s3DeleteRequest +
    sqsMessages * 3 * PRICES.sqsRequest +
    dynamodbWrites * PRICES.dynamodbWriteUnit +
    lambdaGbSeconds * PRICES.lambdaGbSecond +
    invocations * PRICES.lambdaRequest;
  const parallel = Math.max(
    1,
    Math.min(input.workerConcurrency, Math.max(1, chains) * RATES.pagesInFlightPerChain),
  );
  // Workers bound it, or S3's per-prefix limit does when a few chains hold most keys, or the
  // bucket's key budget, which every worker shares.
  const byWorkers = (pages * RATES.secondsPerPage) / parallel;
  const byS3 = input.entries / (RATES.s3DeletesPerSecondPerPrefix * Math.max(1, chains));
  const byBudget = input.maxKeysPerSecond ? input.entries / input.maxKeysPerSecond : 0;
  return {
    s3Requests,
    sqsMessages,
    dynamodbWrites,
    lambdaGbSeconds,
    costUsd: round(costUsd, 6),
    seconds: Math.ceil(Math.max(byWorkers, byS3, byBudget) + 1),
  };
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));
