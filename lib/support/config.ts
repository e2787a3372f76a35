/** A setting that is missing or malformed: the function refuses to start, saying which. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Configuration of every Lethe function, read from the environment at cold start only. */
export interface LetheConfig {
  tableName: string;
  bucket: string;
  queueUrl: string;
  /** First path segment of every stream location. */
  dataRoot: string;
  pageSize: number;
  staleAfterSeconds: number;
  maxAttempts: number;
  maxRounds: number;
  ingestGraceSeconds: number;
  maxEventsBytes: number;
  retryAfterSeconds: number;
  receiptRetentionDays: number;
  /** `auto`: ask the bucket whether it keeps versions; `off`: the bucket is known not to. */
  bucketVersioning: 'auto' | 'off';
  /** Seconds a deletion waits, cancellable, when its request names no grace window. */
  defaultGraceSeconds: number;
  /** The EventBridge bus every state change is put on. */
  eventBusName: string;
  /** The KMS key (ECC_NIST_P256, SIGN_VERIFY) that signs deletion certificates. */
  certificateKeyId: string;
  /** The queue of plan pages (dry runs), apart from the work queue. */
  planQueueUrl: string;
  /** Most worker invocations at once: what a plan's estimate of seconds assumes. */
  workerConcurrency: number;
  /** Streams a tenant offboarding takes in per fan-out step. */
  offboardingPageSize: number;
  /**
   * Keys the whole pipeline deletes per second in its bucket, across every worker, to leave
   * S3's per-prefix request rate to live traffic; 0: no budget (S3's own limit applies).
   */
  maxKeysPerSecond: number;
}

/** Environment variable of each setting, shared by the stack and the local runtime. */
export const ENV = {
  tableName: 'LETHE_TABLE_NAME',
  bucket: 'LETHE_BUCKET_NAME',
  queueUrl: 'LETHE_QUEUE_URL',
  dataRoot: 'LETHE_DATA_ROOT',
  pageSize: 'LETHE_PAGE_SIZE',
  staleAfterSeconds: 'LETHE_STALE_AFTER_SECONDS',
  maxAttempts: 'LETHE_MAX_ATTEMPTS',
  maxRounds: 'LETHE_MAX_ROUNDS',
  ingestGraceSeconds: 'LETHE_INGEST_GRACE_SECONDS',
  maxEventsBytes: 'LETHE_MAX_EVENTS_BYTES',
  retryAfterSeconds: 'LETHE_RETRY_AFTER_SECONDS',
  receiptRetentionDays: 'LETHE_RECEIPT_RETENTION_DAYS',
  bucketVersioning: 'LETHE_BUCKET_VERSIONING',
  defaultGraceSeconds: 'LETHE_DEFAULT_GRACE_SECONDS',
  eventBusName: 'LETHE_EVENT_BUS_NAME',
  certificateKeyId: 'LETHE_CERTIFICATE_KEY_ID',
  planQueueUrl: 'LETHE_PLAN_QUEUE_URL',
  workerConcurrency: 'LETHE_WORKER_CONCURRENCY',
  offboardingPageSize: 'LETHE_OFFBOARDING_PAGE_SIZE',
  maxKeysPerSecond: 'LETHE_MAX_KEYS_PER_SECOND',
} as const satisfies Record<keyof LetheConfig, string>;

export const DEFAULTS = {
  dataRoot: 'streams',
  pageSize: 1000,
  staleAfterSeconds: 300,
  maxAttempts: 5,
  maxRounds: 5,
  ingestGraceSeconds: 35,
  maxEventsBytes: 1_048_576,
  retryAfterSeconds: 30,
  receiptRetentionDays: 365,
  defaultGraceSeconds: 0,
  workerConcurrency: 20,
  offboardingPageSize: 100,
  maxKeysPerSecond: 0,
} as const;

/** The longest grace window a deletion may wait out: 30 days. */
export const MAX_GRACE_SECONDS = 2_592_000;

/**
 * The largest events body that can reach the api function: API Gateway, which takes every media
 * type as binary, hands it the body base64-encoded (4 bytes for every 3) inside Lambda's
 * synchronous payload of 6,291,456 bytes, so 4,500,000 bytes (6,000,000 encoded) leave over
 * 280 KB for the event's headers and request context.
 */
export const MAX_EVENTS_BYTES = 4_500_000;

type Env = Record<string, string | undefined>;

function versioning(value: string | undefined): LetheConfig['bucketVersioning'] {
  if (value === undefined || value === '' || value === 'auto') return 'auto';
  if (value === 'off') return 'off';
  throw new ConfigError(`${ENV.bucketVersioning} must be auto or off (got ${value})`);
}

/** The resources each function needs named in its environment. */
export const REQUIRED_SETTINGS = {
  api: ['tableName', 'bucket', 'certificateKeyId'],
  dispatcher: ['tableName', 'queueUrl', 'planQueueUrl'],
  worker: ['tableName', 'queueUrl'],
  sweeper: ['tableName', 'queueUrl', 'planQueueUrl'],
  publisher: ['eventBusName'],
  planner: ['tableName', 'planQueueUrl'],
} as const satisfies Record<string, ReadonlyArray<keyof LetheConfig>>;

export type FunctionName = keyof typeof REQUIRED_SETTINGS;

/**
 * Reads the configuration and checks it at once (a cold start fails with the setting's name,
 * rather than a request failing later on an empty table name). `required` names the settings
 * without a default that the caller needs.
 */
export function loadConfig(
  env: Env = process.env,
  required: ReadonlyArray<keyof LetheConfig> = [],
): LetheConfig {
  const missing = required.filter((key) => !env[ENV[key]]);
  if (missing.length > 0) {
    throw new ConfigError(
      `missing setting${missing.length > 1 ? 's' : ''}: ${missing.map((key) => ENV[key]).join(', ')}`,
    );
  }
  const text = (key: keyof LetheConfig, fallback?: string) => {
    const value = env[ENV[key]] ?? fallback;
    return value ?? '';
  };
  const int = (key: keyof typeof DEFAULTS, min: number, max: number) => {
    const raw = env[ENV[key]];
    if (raw === undefined || raw === '') return DEFAULTS[key] as number;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ConfigError(`${ENV[key]} must be an integer from ${min} to ${max} (got ${raw})`);
    }
    return value;
  };
  const dataRoot = text('dataRoot', DEFAULTS.dataRoot);
  if (!/^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/.test(dataRoot)) {
    throw new ConfigError(`${ENV.dataRoot} must be path segments like "streams" (got ${dataRoot})`);
  }
  return {
    tableName: text('tableName'),
    bucket: text('bucket'),
    queueUrl: text('queueUrl'),
    dataRoot,
    pageSize: int('pageSize', 1, 1000),
    staleAfterSeconds: int('staleAfterSeconds', 1, 86_400),
    maxAttempts: int('maxAttempts', 1, 100),
    maxRounds: int('maxRounds', 1, 100),
    // At least 2: the api gives up its write after 0.7 of it (1 s at least), so verification
    // always waits longer than an ingest in flight can still land.
    ingestGraceSeconds: int('ingestGraceSeconds', 2, 900),
    maxEventsBytes: int('maxEventsBytes', 1, MAX_EVENTS_BYTES),
    retryAfterSeconds: int('retryAfterSeconds', 1, 3600),
    receiptRetentionDays: int('receiptRetentionDays', 1, 36_500),
    bucketVersioning: versioning(env[ENV.bucketVersioning]),
    defaultGraceSeconds: int('defaultGraceSeconds', 0, MAX_GRACE_SECONDS),
    eventBusName: text('eventBusName'),
    certificateKeyId: text('certificateKeyId'),
    planQueueUrl: text('planQueueUrl'),
    // Lambda's maximum concurrency of an SQS event source: 2 to 1,000.
    workerConcurrency: int('workerConcurrency', 2, 1_000),
    offboardingPageSize: int('offboardingPageSize', 1, 1_000),
    maxKeysPerSecond: int('maxKeysPerSecond', 0, 1_000_000),
  };
}
