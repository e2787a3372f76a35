// lib/observability: structured logs and EMF metrics, scoped per invocation and per record.
export { loggedDeletionEvents } from './deletion-events.ts';
export { METRICS, METRICS_DIMENSIONS, METRICS_NAMESPACE, type MetricKey } from './metrics.ts';
export {
  count,
  countRetries,
  currentLogger,
  type DeletionKeys,
  keysOf,
  type ScopedLog,
  sample,
  Telemetry,
  type TelemetryOptions,
} from './telemetry.ts';
