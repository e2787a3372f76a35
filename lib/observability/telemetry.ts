import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { METRICS, type MetricKey } from './metrics.ts';

/** What a log line says about the deletion it concerns: every line carries what is known. */
export type DeletionKeys = {
  deletionId?: string;
  tenant?: string;
  stream?: string;
  generation?: number;
};

/** Log methods that add the current scope's deletion keys to every line. */
export interface ScopedLog {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown> | Error): void;
}

/** One invocation, or one record of it: its deletion, its invocation's metrics. */
interface Scope {
  readonly keys: DeletionKeys;
  readonly log: ScopedLog;
  /** Shared by the records of one invocation; counters hold one sum, samples many values. */
  readonly values: Map<MetricKey, number[]>;
}

/**
 * Invocations of one handler may run concurrently in one process (the local runtime does), so
 * their state lives in the async context of each invocation, never in a module-level object:
 * the one Logger adds each scope's keys per call, and metrics are counted per invocation.
 */
const scopes = new AsyncLocalStorage<Scope>();

export const keysOf = ({ deletionId, tenant, stream, generation }: DeletionKeys): DeletionKeys =>
  Object.fromEntries(
    Object.entries({ deletionId, tenant, stream, generation }).filter(([, v]) => v !== undefined),
  );

export interface TelemetryOptions {
  readonly logger: Logger;
  /** Where EMF is written; without it nothing is published (off an AWS account, in tests). */
  readonly metrics?: Metrics;
}

/** Structured logs and EMF metrics of one function, scoped per invocation and per record. */
export class Telemetry {
  /** Logs with the keys of the current invocation or record. */
  readonly logger: ScopedLog;
  readonly #root: Logger;
  readonly #metrics: Metrics | undefined;

  constructor(options: TelemetryOptions) {
    this.#root = options.logger;
    this.#metrics = options.metrics;
    const root = options.logger;
    const withKeys = (attributes?: Record<string, unknown> | Error) => ({
      ...scopes.getStore()?.keys,
      ...(attributes instanceof Error ? { error: attributes } : attributes),
    });
    this.logger = {
      debug: (message, attributes) => root.debug(message, withKeys(attributes)),
      info: (message, attributes) => root.info(message, withKeys(attributes)),
      warn: (message, attributes) => root.warn(message, withKeys(attributes)),
      error: (message, attributes) => root.error(message, withKeys(attributes)),
    };
  }

  /**
   * Runs one invocation with metrics of its own, published as one EMF document when it ends,
   * whether it succeeded or threw.
   */
  async invocation<T>(
    context: Context | undefined,
    keys: DeletionKeys,
    run: () => Promise<T>,
  ): Promise<T> {
    // Lambda runs one invocation at a time per environment (Powertools scopes it otherwise).
    if (context) this.#root.addContext(context);
    const scope: Scope = { keys: keysOf(keys), log: this.logger, values: new Map() };
    try {
      return await scopes.run(scope, run);
    } finally {
      this.#publish(scope.values);
    }
  }

  /** Runs `run` with these keys added to its log lines, e.g. for one record of a batch. */
  scope<T>(keys: DeletionKeys, run: () => Promise<T>): Promise<T> {
    const parent = scopes.getStore();
    return scopes.run(
      {
        keys: { ...parent?.keys, ...keysOf(keys) },
        log: this.logger,
        values: parent?.values ?? new Map(),
      },
      run,
    );
  }

  #publish(values: Map<MetricKey, number[]>) {
    if (!this.#metrics || values.size === 0) return;
    // Added and published in one synchronous step: no other invocation can interleave.
    for (const [key, samples] of values) {
      for (const value of samples) {
        this.#metrics.addMetric(METRICS[key].name, METRICS[key].unit, value);
      }
    }
    this.#metrics.publishStoredMetrics();
  }
}

/** Adds to a counter of the current invocation; outside one (a script, a test) it is dropped. */
export function count(metric: MetricKey, value: number) {
  const values = scopes.getStore()?.values;
  if (!values || value === 0) return;
  values.set(metric, [(values.get(metric)?.[0] ?? 0) + value]);
}

/** Records one value of a sample metric (a duration, an age) in the current invocation. */
export function sample(metric: MetricKey, value: number) {
  const values = scopes.getStore()?.values;
  values?.set(metric, [...(values.get(metric) ?? []), value]);
}

/** The current invocation's log, for code below the handlers that has none of its own. */
export const currentLogger = (): ScopedLog | undefined => scopes.getStore()?.log;

/** The part of an SDK client's middleware stack this module uses. */
interface RetryCountingStack {
  add(
    middleware: (
      next: (args: unknown) => Promise<{ output: unknown }>,
    ) => (args: unknown) => Promise<{ output: unknown }>,
    options: { step: 'initialize'; name: string; override: boolean },
  ): void;
}

const retriesOf = (response: unknown) => {
  const attempts = (response as { $metadata?: { attempts?: number } } | undefined)?.$metadata
    ?.attempts;
  return attempts ? attempts - 1 : 0;
};

/**
 * Counts the SDK's own retries (throttling, 5xx: `$metadata.attempts - 1`) of every request
 * into the invocation that made it. Adding it twice to one client replaces it.
 */
export function countRetries(client: { readonly middlewareStack?: unknown }) {
  // Every v3 client's stack has this shape; its own types are generic per service.
  (client.middlewareStack as RetryCountingStack | undefined)?.add(
    (next) => async (args) => {
      try {
        const result = await next(args);
        count('requestsRetried', retriesOf(result.output));
        return result;
      } catch (error) {
        count('requestsRetried', retriesOf(error));
        throw error;
      }
    },
    { step: 'initialize', name: 'letheCountRetries', override: true },
  );
}
