import { count } from '../observability/index.ts';
import type { WorkOutcome } from '../pipeline/index.ts';

/**
 * Counts a page's outcome into the invocation's metrics: the worker's pages, and the first
 * page a dispatch lists and deletes itself.
 */
export function countWork(result: WorkOutcome) {
  if (result.outcome === 'deferred') count('pagesDeferred', 1);
  if (result.outcome === 'slowed') count('pagesSlowedDown', 1);
  if (result.outcome !== 'deleted') return;
  count('pagesDeleted', 1);
  count('objectsDeleted', result.objects);
  count('bytesDeleted', result.bytes);
  count('keysFailed', result.failures);
  count('keysRetried', result.retriedKeys);
}
