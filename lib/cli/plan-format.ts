import type { Estimate, PlanView } from '../core/index.ts';
import { table } from './format.ts';
import { formatBytes, formatCount, formatDuration, plural } from './progress.ts';

/** The states a plan ends in: its counts no longer change. */
export const planHasEnded = (plan: Pick<PlanView, 'state'>) =>
  plan.state === 'COMPLETED' || plan.state === 'FAILED';

/** `170.8 KiB (174,899 bytes)`: readable, and exact; under a KiB, only the exact `512 B`. */
export function bytesExactly(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${formatBytes(bytes)} (${formatCount(bytes)} bytes)`;
}

/** `0.000123 USD`, `12.50 USD`: every digit the estimate has, at least cents. */
export function formatUsd(amount: number): string {
  const digits = { minimumFractionDigits: 2, maximumFractionDigits: 6 };
  return `${amount.toLocaleString('en-US', digits)} USD`;
}

/** What the plan's deletion would take, one service a line, indented under the counts. */
export function estimateLines(estimate: Estimate): string[] {
  const gbSeconds = estimate.lambdaGbSeconds.toLocaleString('en-US', {
    maximumFractionDigits: 3,
  });
  const rows = [
    ['S3 requests', formatCount(estimate.s3Requests)],
    ['SQS messages', formatCount(estimate.sqsMessages)],
    ['DynamoDB writes', formatCount(estimate.dynamodbWrites)],
    ['Lambda', `${gbSeconds} GB-s`],
    ['cost', formatUsd(estimate.costUsd)],
    ['time', `about ${formatDuration(estimate.seconds * 1000)} at the stack's worker concurrency`],
  ];
  return table(rows).map((line) => `  ${line}`);
}

/** The head line: the plan's state, its stream and its id, and how far the counts go. */
function headLine(plan: PlanView): string {
  const what = `plan of ${plan.tenant}/${plan.stream} generation ${plan.generation} (plan ${plan.planId})`;
  const extent = {
    PENDING: ': nothing counted yet',
    RUNNING: ': counted so far',
    COMPLETED: '',
    FAILED: ': counted before it failed',
  }[plan.state];
  return `${plan.state} ${what}${extent}`;
}

/** The counts, one a line, with the failure of a FAILED plan above them. */
function countRows(plan: PlanView): string[][] {
  const rows = [['location', plan.location]];
  if (plan.failure) rows.push(['failure', `${plan.failure.code}: ${plan.failure.message}`]);
  rows.push(
    ['objects', formatCount(plan.objects)],
    ['versions', formatCount(plan.versions)],
    ['delete markers', formatCount(plan.deleteMarkers)],
    ['bytes', bytesExactly(plan.bytes)],
    ['uploads in progress', formatCount(plan.multipartUploads)],
  );
  return rows;
}

/** What follows the counts: the estimate once COMPLETED, and what to run next. */
function closingLines(plan: PlanView): string[] {
  const ref = `${plan.tenant}/${plan.stream}`;
  if (plan.state === 'COMPLETED') {
    return [
      'the deletion would take:',
      ...estimateLines(plan.estimate),
      `nothing was deleted; to delete: lethe delete ${ref}`,
    ];
  }
  if (plan.state === 'FAILED') {
    return [`nothing was deleted; to plan again: lethe delete ${ref} --dry-run`];
  }
  return [
    `the plan is still ${plan.state}; the estimate comes once it is COMPLETED: lethe plans get ${plan.tenant} ${plan.planId}`,
    `nothing was deleted; to delete: lethe delete ${ref}`,
  ];
}

/**
 * A plan for a reader: its counts (exact once COMPLETED, so far before), bytes readable and
 * exact, the estimate of the deletion once COMPLETED, and that nothing was deleted.
 */
export function planSummary(plan: PlanView): string {
  return `${[headLine(plan), ...table(countRows(plan)), ...closingLines(plan)].join('\n')}\n`;
}

/** The progress of a plan, as its parts: state, objects and bytes counted, elapsed time. */
export function planProgressParts(plan: PlanView, elapsedMs: number): string[] {
  const parts = [
    plan.state,
    `${plural(plan.objects, 'object')} counted (${formatBytes(plan.bytes)})`,
    `elapsed ${formatDuration(elapsedMs)}`,
  ];
  return planHasEnded(plan) ? [...parts, `plan ${plan.planId}`] : parts;
}
