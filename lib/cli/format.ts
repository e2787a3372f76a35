import type { DeletionReceipt, StreamView } from '../core/index.ts';
import type { StreamPage } from './client.ts';
import { formatBytes, formatCount, formatDuration } from './progress.ts';

const name = (view: { tenant: string; stream: string }) => `${view.tenant}/${view.stream}`;

export function describeStream(view: StreamView): string {
  const lines = [
    `stream      ${name(view)}`,
    `state       ${view.state}`,
    `generation  ${view.generation}`,
    `location    ${view.location}`,
    `created     ${view.createdAt}`,
  ];
  if (view.deletionId) lines.push(`deletion    ${view.deletionId}`);
  return `${lines.join('\n')}\n`;
}

export function streamTable(page: StreamPage): string {
  const rows = [['STREAM', 'STATE', 'GENERATION', 'CREATED', 'LOCATION']];
  for (const view of page.streams) {
    rows.push([view.stream, view.state, String(view.generation), view.createdAt, view.location]);
  }
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => row[column]?.length ?? 0)),
  );
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths?.[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  if (page.nextToken) lines.push(`more: --next-token ${page.nextToken}`);
  return `${lines.join('\n')}\n`;
}

/** One line that says how a deletion ended (or stands), then one line per reported failure. */
export function receiptSummary(receipt: DeletionReceipt): string {
  const what = `${name(receipt)} generation ${receipt.generation}`;
  const amount = `${formatCount(receipt.objectsDeleted)} objects (${formatBytes(receipt.bytesDeleted)})`;
  let line: string;
  if (receipt.state === 'COMPLETED') {
    const took = receipt.completedAt
      ? ` in ${formatDuration(Date.parse(receipt.completedAt) - Date.parse(receipt.requestedAt))}`
      : '';
    line = `COMPLETED ${what}: ${amount} deleted${took}, location verified empty`;
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
  return `${[`${line} (deletion ${receipt.deletionId}, attempts ${receipt.attempts})`, ...details].join('\n')}\n`;
}
