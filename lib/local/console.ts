import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';

/**
 * The local stack's console: one concise line per deletion state change, from the table's
 * stream records (the structured logs stay behind LETHE_LOG_LEVEL).
 */
export function stateChangeLine(record: DynamoDBRecord): string | undefined {
  const image = record.dynamodb?.NewImage;
  if (!image) return undefined;
  const now = unmarshall(image as never);
  const before = record.dynamodb?.OldImage
    ? unmarshall(record.dynamodb.OldImage as never)
    : undefined;
  if (now.type !== 'DELETION' || before?.state === now.state) return undefined;
  const from = before?.state ? `${before.state} -> ` : '';
  const subject = `deletion ${now.deletionId} of ${now.tenant}/${now.stream}`;
  return `${subject}: ${from}${now.state}${detail(now)}`;
}

function detail(deletion: Record<string, unknown>): string {
  switch (deletion.state) {
    case 'SCHEDULED':
      return ` (starts at ${deletion.executeAfter})`;
    case 'RUNNING':
      return ` (round ${deletion.round}, ${deletion.chainsTotal} chains)`;
    case 'COMPLETED':
      return ` (${Number(deletion.objectsDeleted ?? 0).toLocaleString('en-US')} objects deleted, location verified empty)`;
    case 'FAILED': {
      const reason = deletion.reason as { code?: string } | undefined;
      return reason?.code ? ` (${reason.code})` : ` (${deletion.failedObjects ?? 0} keys failed)`;
    }
    default:
      return '';
  }
}
