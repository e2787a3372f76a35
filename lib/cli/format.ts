import type { DeletionReceipt, StreamView } from '../core/index.ts';
import type { DeletionPage, StreamPage } from './client.ts';
import { startsIn } from './countdown.ts';
import { formatBytes, formatCount, formatDuration, plural } from './progress.ts';

const name = (view: { tenant: string; stream: string }) => `${view.tenant}/${view.stream}`;

/** How long a deletion took: tenths of a second below one (a small one takes less), not `0s`. */
const timeTaken = (ms: number) =>
  ms < 1000 ? `${(Math.max(100, ms) / 1000).toFixed(1)}s` : formatDuration(ms);

/** What a receipt deleted: a stream's incarnation, or its partitions before a day. */
const subjectOf = (receipt: DeletionReceipt) =>
  receipt.partitionsBefore
    ? `${name(receipt)} partitions before ${receipt.partitionsBefore}`
    : `${name(receipt)} generation ${receipt.generation}`;

/** A stream, one field a line. */
export function describeStream(view: StreamView): string {
  const lines = [
    `stream      ${name(view)}`,
    `state       ${view.state}`,
    `generation  ${view.generation}`,
    `location    ${view.location}`,
    `created     ${view.createdAt}`,
  ];
  if (view.deletionId) lines.push(`deletion    ${view.deletionId}`);
  if (view.retentionDays) {
    lines.push(`retention   ${plural(view.retentionDays, 'day')}`);
  }
  if (view.partitionDeletionId) {
    lines.push(`partitions  deletion ${view.partitionDeletionId} under way`);
  }
  return `${lines.join('\n')}\n`;
}

/** Columns padded to their widest cell; a column listed in `right` is aligned right. */
export function table(rows: readonly string[][], right: readonly number[] = []): string[] {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => row[column]?.length ?? 0)),
  );
  return rows.map((row) =>
    row
      .map((cell, column) =>
        right.includes(column)
          ? cell.padStart(widths?.[column] ?? 0)
          : cell.padEnd(widths?.[column] ?? 0),
      )
      .join('  ')
      .trimEnd(),
  );
}

/** A page of streams, and the option that reads the next page. */
export function streamTable(page: StreamPage): string {
  const rows = [['STREAM', 'STATE', 'GENERATION', 'CREATED', 'LOCATION']];
  for (const view of page.streams) {
    rows.push([view.stream, view.state, String(view.generation), view.createdAt, view.location]);
  }
  const lines = table(rows);
  if (page.nextToken) lines.push(`more: --next-token ${page.nextToken}`);
  return `${lines.join('\n')}\n`;
}

/** A page of deletions, newest first, and the command that reads the next page. */
export function deletionTable(page: DeletionPage, nextPage: (token: string) => string): string {
  const newestFirst = [...page.deletions].sort((a, b) =>
    b.requestedAt.localeCompare(a.requestedAt),
  );
  const rows = [['DELETION', 'STREAM', 'SCOPE', 'STATE', 'REQUESTED', 'OBJECTS DELETED']];
  for (const receipt of newestFirst) {
    rows.push([
      receipt.deletionId,
      receipt.stream,
      // A partition deletion (asked for, or made by retention) takes only days before its cutoff.
      receipt.partitionsBefore ? `before ${receipt.partitionsBefore}` : 'stream',
      receipt.state,
      receipt.requestedAt,
      formatCount(receipt.objectsDeleted),
    ]);
  }
  const lines = table(rows, [5]);
  if (page.nextToken) lines.push(`more: ${nextPage(page.nextToken)}`);
  return `${lines.join('\n')}\n`;
}

/** What may be done with a SCHEDULED deletion before it starts, one command a line. */
export function scheduledCommands(receipt: DeletionReceipt): string {
  const target = `${receipt.tenant} ${receipt.deletionId}`;
  return [
    `cancel it:    lethe deletions cancel ${target}`,
    `start it now: lethe deletions expedite ${target}`,
    `follow it:    lethe deletions get ${target}`,
    '',
  ].join('\n');
}

/**
 * One line that says how a deletion ended (or stands), then one line per reported failure.
 * `wallNow` (milliseconds since the epoch) says how long a SCHEDULED deletion has to go.
 */
export function receiptSummary(receipt: DeletionReceipt, wallNow = Date.now()): string {
  const what = subjectOf(receipt);
  const emptied = receipt.partitionsBefore ? 'those partitions' : 'location';
  const amount = `${plural(receipt.objectsDeleted, 'object')} (${formatBytes(receipt.bytesDeleted)})`;
  let line: string;
  if (receipt.state === 'SCHEDULED') {
    line = `SCHEDULED ${what}: nothing deleted yet; the deletion starts at ${receipt.executeAfter}, ${startsIn(receipt.executeAfter, wallNow)}`;
  } else if (receipt.state === 'CANCELLED') {
    const when = receipt.cancelledAt ? ` at ${receipt.cancelledAt}` : '';
    line = `CANCELLED ${what}${when}: nothing was deleted`;
  } else if (receipt.state === 'COMPLETED') {
    // From its start (`executeAfter`, the request's time without a grace window): a deletion
    // that waited out a grace window took the time after it.
    const took = receipt.completedAt
      ? ` in ${timeTaken(Date.parse(receipt.completedAt) - Date.parse(receipt.executeAfter))}`
      : '';
    line = `COMPLETED ${what}: ${amount} deleted${took}, ${emptied} verified empty`;
  } else if (receipt.state === 'FAILED') {
    const failed = receipt.failedObjects
      ? `, ${formatCount(receipt.failedObjects)} could not be`
      : '';
    line = `FAILED ${what}: ${amount} deleted${failed}`;
  } else {
    line = `${receipt.state} ${what}: ${amount} deleted so far`;
  }
  const details = (receipt.failures ?? []).map(
    (failure) => `  ${failure.code}${failure.key ? ` ${failure.key}` : ''}: ${failure.message}`,
  );
  // A deletion that never started has made no attempt, whatever its count is ready for.
  const attempted = receipt.state !== 'SCHEDULED' && receipt.state !== 'CANCELLED';
  const attempts = attempted ? `, attempts ${receipt.attempts}` : '';
  return `${[`${line} (deletion ${receipt.deletionId}${attempts})`, ...details].join('\n')}\n`;
}
