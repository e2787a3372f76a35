/**
 * Lethe's CloudWatch metrics, shared by the functions that emit them (as EMF) and the stack
 * that graphs and alarms on them, so neither can drift from the other.
 */
export const METRICS_NAMESPACE = 'Lethe';

/**
 * The one dimension of every metric, the same in every function of a stack so its alarms see
 * one series: the stack's name on AWS (POWERTOOLS_SERVICE_NAME), this without it.
 */
export const METRICS_DIMENSIONS = { service: 'lethe' } as const;

export const METRICS = {
  /** Objects a page deleted, counted once however often the page was delivered. */
  objectsDeleted: { name: 'ObjectsDeleted', unit: 'Count' },
  bytesDeleted: { name: 'BytesDeleted', unit: 'Bytes' },
  /** Pages deleted and counted (one DeleteObjects of up to 1,000 keys each). */
  pagesDeleted: { name: 'PagesDeleted', unit: 'Count' },
  /** Keys that could not be deleted (AccessDenied, Object Lock): they end in a FAILED receipt. */
  keysFailed: { name: 'KeysFailed', unit: 'Count' },
  /** Keys DeleteObjects was asked again after a per-key SlowDown or other transient error. */
  keysRetried: { name: 'KeysRetried', unit: 'Count' },
  /** Pages sent back to the queue to wait for room in the key budget or their chain's pace. */
  pagesDeferred: { name: 'PagesDeferred', unit: 'Count' },
  /** Pages S3 refused whole with 503 SlowDown: each slowed its chain down (lib/pipeline/pace). */
  pagesSlowedDown: { name: 'PagesSlowedDown', unit: 'Count' },
  /** AWS SDK requests retried after throttling or a 5xx (`$metadata.attempts - 1`). */
  requestsRetried: { name: 'RequestsRetried', unit: 'Count' },
  deletionsCompleted: { name: 'DeletionsCompleted', unit: 'Count' },
  deletionsFailed: { name: 'DeletionsFailed', unit: 'Count' },
  /** From the request to COMPLETED, one value per completed deletion. */
  deletionDuration: { name: 'DeletionDuration', unit: 'Seconds' },
  /** Deletion state changes put on the event bus (at least once: a retry may put one again). */
  eventsPublished: { name: 'EventsPublished', unit: 'Count' },
  /** Emitted by every sweep: deletions waiting out their grace window. */
  scheduledDeletions: { name: 'ScheduledDeletions', unit: 'Count' },
  /** Emitted by every sweep: how long the oldest open deletion has been open (0 if none). */
  oldestDeletionAge: { name: 'OldestDeletionAge', unit: 'Seconds' },
  /** Emitted by every sweep: tenant offboardings still under way after it looked at them. */
  openOffboardings: { name: 'OpenOffboardings', unit: 'Count' },
  /** Tenant offboardings a sweep found finished (every stream's deletion COMPLETED). */
  offboardingsCompleted: { name: 'OffboardingsCompleted', unit: 'Count' },
  /** Emitted by every sweep: streams with a retention policy. */
  retentionPolicies: { name: 'RetentionPolicies', unit: 'Count' },
  /** Partition deletions the day's retention requested. */
  retentionDeletions: { name: 'RetentionDeletions', unit: 'Count' },
  /** Plans a sweep took on again: they had counted no page for the stale interval. */
  plansResumed: { name: 'PlansResumed', unit: 'Count' },
  /** Plans a sweep ended FAILED (Stalled): no page counted after every attempt. */
  plansFailed: { name: 'PlansFailed', unit: 'Count' },
  /**
   * Items a sweep could not handle (an offboarding, a due or stale deletion, a retention
   * stream, a plan, or a listing of them): each logged as `sweep item failed`; the sweep went on.
   */
  sweepItemsFailed: { name: 'SweepItemsFailed', unit: 'Count' },
} as const satisfies Record<string, { name: string; unit: 'Count' | 'Bytes' | 'Seconds' }>;

export type MetricKey = keyof typeof METRICS;
