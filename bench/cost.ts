import type { Economy } from './counting.ts';

export interface Price {
  usd: number;
  unit: string;
  source: string;
}

/**
 * List prices in us-east-1, read on 2026-11-29. The AWS pricing pages render their tables in
 * the browser, so each figure is the one quoted from the page by the third party named, and
 * checked against a second quote where one was found.
 */
export const PRICES = {
  read: '2026-11-29',
  region: 'us-east-1',
  s3List: {
    usd: 0.005,
    unit: 'per 1,000 LIST requests (S3 Standard: PUT, COPY, POST, LIST)',
    source:
      'https://aws.amazon.com/s3/pricing/ as quoted by c3x.dev/blog/s3-request-fees-explained and cloudcasts.io/article/deleting-an-s3-bucket-costs-money',
  },
  s3Delete: {
    usd: 0,
    unit: 'per DeleteObjects request ("DELETE and CANCEL requests are free")',
    source:
      'https://aws.amazon.com/s3/pricing/ footnote, as quoted by cloudcasts.io/article/deleting-an-s3-bucket-costs-money (emptying a bucket with DeleteObjects costs only its LISTs)',
  },
  s3DeleteIfPost: {
    usd: 0.005,
    unit: 'per 1,000 requests, if DeleteObjects (an HTTP POST) were billed as a POST',
    source: 'sensitivity only: the POST rate above',
  },
  lambdaGbSecond: {
    usd: 0.0000133334,
    unit: 'per GB-second, Arm (the stack’s architecture), first 7.5 billion GB-s a month',
    source:
      'https://aws.amazon.com/lambda/pricing/ as tabulated in artillery’s lib/platform/aws-lambda/prices.js (arm64 1333340e-10)',
  },
  lambdaRequest: {
    usd: 0.2 / 1e6,
    unit: 'per invocation ($0.20 per million)',
    source:
      'https://aws.amazon.com/lambda/pricing/ (quoted by api-evangelist/aws-lambda pricing harvest)',
  },
  sqsRequest: {
    usd: 0.4 / 1e6,
    unit: 'per request, standard queue ($0.40 per million after the free million; one request per 64 KB)',
    source: 'https://aws.amazon.com/sqs/pricing/ as quoted by cloudburn.io/blog/amazon-sqs-pricing',
  },
  dynamoWrite: {
    usd: 0.625 / 1e6,
    unit: 'per write request unit, on-demand ($0.625 per million; 2 units per transactional item)',
    source:
      'https://aws.amazon.com/dynamodb/pricing/on-demand/ (units), price as quoted by airbyte.com/data-engineering-resources/dynamodb-pricing (after the November 2024 reduction)',
  },
  dynamoRead: {
    usd: 0.125 / 1e6,
    unit: 'per read request unit, on-demand ($0.125 per million; strongly consistent read = 1 unit)',
    source: 'as for write request units',
  },
} as const;

export interface CostInputs {
  /** Objects the measured deletion removed. */
  objects: number;
  economy: Economy;
  /** Seconds of worker invocations, measured (receive to delete of their messages). */
  invocationSeconds: number;
  workerMemoryMB: number;
  /** Assumed seconds of one page on AWS, for the estimate beside the measured duration. */
  awsPageSeconds: number;
  pageSize: number;
}

export interface CostLine {
  item: string;
  /** Count per million objects. */
  perMillion: number;
  unit: string;
  usd: number;
}

/** Dollars per million objects deleted, from the counted requests of one measured deletion. */
export function costPerMillion(inputs: CostInputs): {
  lines: CostLine[];
  /** With the worker's duration as measured on moto (an upper bound). */
  total: number;
  /** With the worker's duration estimated for AWS (pages x assumed page time). */
  totalAws: number;
} {
  const scale = 1e6 / inputs.objects;
  const { economy } = inputs;
  const lists = (economy.s3ByCommand.ListObjectsV2 ?? 0) * scale;
  const deletes = (economy.s3ByCommand.DeleteObjects ?? 0) * scale;
  const gb = inputs.workerMemoryMB / 1024;
  const gbSeconds = inputs.invocationSeconds * gb * scale;
  const awsGbSeconds = (1e6 / inputs.pageSize) * inputs.awsPageSeconds * gb;
  const invocations = economy.sqsReceivesWithMessages * scale;
  // Empty receives are the event source's idle polling: a cost per hour, not per object.
  const sqsRequests =
    (economy.sqsSendCalls + economy.sqsReceivesWithMessages + economy.sqsDeleteBatches) * scale;
  const lines: CostLine[] = [
    {
      item: 'S3 LIST (ListObjectsV2)',
      perMillion: lists,
      unit: 'requests',
      usd: (lists / 1000) * PRICES.s3List.usd,
    },
    {
      item: 'S3 DeleteObjects',
      perMillion: deletes,
      unit: 'requests',
      usd: deletes * PRICES.s3Delete.usd,
    },
    {
      item: `Lambda duration (worker, ${inputs.workerMemoryMB} MB), measured here`,
      perMillion: gbSeconds,
      unit: 'GB-seconds',
      usd: gbSeconds * PRICES.lambdaGbSecond.usd,
    },
    {
      item: 'Lambda invocations (worker)',
      perMillion: invocations,
      unit: 'invocations',
      usd: invocations * PRICES.lambdaRequest.usd,
    },
    {
      item: 'SQS (sends, receives with messages, deletes)',
      perMillion: sqsRequests,
      unit: 'requests',
      usd: sqsRequests * PRICES.sqsRequest.usd,
    },
    {
      item: 'DynamoDB writes',
      perMillion: economy.dynamoWriteUnits * scale,
      unit: 'write request units',
      usd: economy.dynamoWriteUnits * scale * PRICES.dynamoWrite.usd,
    },
    {
      item: 'DynamoDB reads',
      perMillion: economy.dynamoReadUnits * scale,
      unit: 'read request units',
      usd: economy.dynamoReadUnits * scale * PRICES.dynamoRead.usd,
    },
  ];
  const total = lines.reduce((sum, line) => sum + line.usd, 0);
  const awsDuration: CostLine = {
    item: `Lambda duration (worker, ${inputs.workerMemoryMB} MB), AWS estimate: ${inputs.awsPageSeconds.toFixed(2)} s per page, no overlap`,
    perMillion: awsGbSeconds,
    unit: 'GB-seconds',
    usd: awsGbSeconds * PRICES.lambdaGbSecond.usd,
  };
  const measured = lines[2] as CostLine;
  return {
    lines: [...lines.slice(0, 3), awsDuration, ...lines.slice(3)],
    total,
    totalAws: total - measured.usd + awsDuration.usd,
  };
}

export interface ScaleAssumptions {
  /** S3's rate per partitioned prefix. */
  perPartitionRate: number;
  /** Seconds from a page's message to its worker sending the next page (one chain link). */
  chainCycleSeconds: number;
  /** Seconds one record (one page) keeps its invocation busy. */
  pageSeconds: number;
  concurrency: number;
  batchSize: number;
}

/**
 * DynamoDB's documented ceiling per partition: 1,000 write units a second. Every chain item of
 * one deletion shares its partition key (`DELETION#<id>`); a page writes its chain twice (list,
 * count), each write of an item under 2 KB costing 2 units. DynamoDB splits a hot partition by
 * sort key ranges, so this is the ceiling before a split, not after.
 */
export const DYNAMODB_PARTITION_WCU = 1000;
export const WCU_PER_PAGE = 4;

/** What binds first, and what the operator changes to move it. */
export const REMEDY: Record<Projection['limitedBy'], string> = {
  'S3 partition rate':
    "S3's own limit: more partitions (prefixes) in the layout; LETHE_MAX_KEYS_PER_SECOND to stay below it for live traffic",
  'chain cadence': 'more chains: a layout with more child prefixes',
  'worker concurrency':
    'workerConcurrency (context key; within the account’s Lambda concurrency quota, 1,000 by default)',
  'DynamoDB partition':
    "nothing to set: DynamoDB splits the deletion's partition for heat; pre-warm the table (warm throughput) for a first burst",
};

export interface Projection {
  partitions: number;
  objectsPerSecond: number;
  hours: number;
  limitedBy: 'S3 partition rate' | 'chain cadence' | 'worker concurrency' | 'DynamoDB partition';
  /** Concurrency that would let S3 be the limit. */
  concurrencyForS3: number;
}

/**
 * Deletion rate with `partitions` date partitions, one chain each: S3 allows each partition
 * `perPartitionRate` deletes a second; a chain lists its next page only after the current one
 * is listed and recorded, so it delivers at most 1,000 keys per cycle; and at most
 * `concurrency x batchSize` pages are in flight, each for `pageSeconds`.
 */
export function project(objects: number, partitions: number, a: ScaleAssumptions): Projection {
  const s3 = partitions * a.perPartitionRate;
  const chains = partitions * (1000 / a.chainCycleSeconds);
  const workers = (a.concurrency * a.batchSize * 1000) / a.pageSeconds;
  const dynamodb = (DYNAMODB_PARTITION_WCU / WCU_PER_PAGE) * 1000;
  const rate = Math.min(s3, chains, workers, dynamodb);
  const limitedBy =
    rate === workers
      ? 'worker concurrency'
      : rate === chains
        ? 'chain cadence'
        : rate === s3
          ? 'S3 partition rate'
          : 'DynamoDB partition';
  return {
    partitions,
    objectsPerSecond: rate,
    hours: objects / rate / 3600,
    limitedBy,
    concurrencyForS3: Math.ceil((Math.min(s3, chains) * a.pageSeconds) / (a.batchSize * 1000)),
  };
}
