import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { plural } from '../cli/progress.ts';

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
  // A partition deletion empties the partitions before its cutoff, not the stream.
  const partitions = now.before ? ` partitions before ${now.before}` : '';
  const subject = `deletion ${now.deletionId} of ${now.tenant}/${now.stream}${partitions}`;
  return `${subject}: ${from}${now.state}${detail(now)}`;
}

function detail(deletion: Record<string, unknown>): string {
  switch (deletion.state) {
    case 'SCHEDULED':
      return ` (starts at ${deletion.executeAfter})`;
    case 'RUNNING':
      return ` (round ${deletion.round}, ${plural(Number(deletion.chainsTotal ?? 0), 'chain')})`;
    case 'COMPLETED':
      return ` (${plural(Number(deletion.objectsDeleted ?? 0), 'object')} deleted, ${deletion.before ? 'those partitions' : 'location'} verified empty)`;
    case 'FAILED': {
      const reason = deletion.reason as { code?: string } | undefined;
      return reason?.code
        ? ` (${reason.code})`
        : ` (${plural(Number(deletion.failedObjects ?? 0), 'key')} failed)`;
    }
    default:
      return '';
  }
}

/** The API's port is taken: by another `npm start`, or anything else. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(readonly port: number) {
    super(
      `port ${port} is already in use (another npm start?): stop what holds it, or pick another port, e.g. PORT=${port + 1} npm start`,
    );
  }
}

/** Prints a line for each deletion whose state a stream record changes, then invokes. */
export function withStateChangeLines(
  handler: (event: unknown) => Promise<unknown>,
  print: (line: string) => void,
): (event: unknown) => Promise<unknown> {
  return async (event) => {
    for (const record of (event as DynamoDBStreamEvent).Records ?? []) {
      const line = stateChangeLine(record);
      if (line) print(line);
    }
    return handler(event);
  };
}
