import type { ApiError } from './client.ts';
import { formatCount } from './progress.ts';

/** Two or more non-empty lines, each of them JSON on its own: newline-delimited JSON. */
export function looksLikeNdjson(text: string): boolean {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  return (
    lines.length >= 2 &&
    lines.every((line) => {
      try {
        JSON.parse(line);
        return true;
      } catch {
        return false;
      }
    })
  );
}

/** The offset into the body where the API found the JSON broken, if it says. */
export function positionOf(error: ApiError): number | undefined {
  const { position } = error.details;
  if (typeof position === 'number' && Number.isInteger(position) && position >= 0) return position;
  const said = /\bposition (\d+)/.exec(error.message)?.[1];
  return said === undefined ? undefined : Number(said);
}

/** `position 57 (line 2, column 1)` of a text. */
export function describePosition(text: string, position: number): string {
  const before = text.slice(0, position).split('\n');
  return `position ${position} (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1})`;
}

/** What to do about an events file the API refused, judging by the file itself. */
export function ingestHints(error: ApiError, events: Uint8Array): string[] {
  const text = new TextDecoder().decode(events);
  if (error.code === 'InvalidJson') {
    const position = positionOf(error);
    const where =
      position === undefined ? [] : [`the API stopped at ${describePosition(text, position)}`];
    // The API's own message may say so already.
    if (!looksLikeNdjson(text) || error.message.includes('NDJSON')) return where;
    return [
      'hint: the file looks like NDJSON (one event per line); the API takes a JSON array: wrap the lines in [ ... ] with commas',
      ...where,
    ];
  }
  if (error.code === 'NotAnArray' && text.trimStart().startsWith('{')) {
    return ['hint: the API takes a JSON array of events: wrap the event in [ ... ]'];
  }
  // No option makes a body larger: the only way through is smaller batches.
  if (error.code === 'PayloadTooLarge') {
    return [
      `hint: the file is ${formatCount(events.byteLength)} bytes: split its events into smaller JSON arrays, one lethe ingest each (each ingest stores one object)`,
    ];
  }
  return [];
}

/** The deletion a 409 (StreamDeleting, PartitionDeletionInProgress) is about: in the body's `error`, or named in its message. */
export function deletionIdOf(error: ApiError): string | undefined {
  const { deletionId } = error.details;
  if (typeof deletionId === 'string' && deletionId !== '') return deletionId;
  return /\(deletion ([0-9a-f-]{36})\)/.exec(error.message)?.[1];
}

/** The refusals that name the deletion in the way: of the stream, or of its partitions. */
const HELD_BY_A_DELETION = ['StreamDeleting', 'PartitionDeletionInProgress'];

/** How to follow (or take back) the deletion that holds a stream, when the refusal names it. */
export function streamDeletingHints(error: ApiError, tenant: string | undefined): string[] {
  const id = deletionIdOf(error);
  if (!HELD_BY_A_DELETION.includes(error.code) || id === undefined || tenant === undefined) {
    return [];
  }
  const hints = [`follow it: lethe deletions get ${tenant} ${id}`];
  if (/scheduled/i.test(error.message))
    hints.push(`cancel it: lethe deletions cancel ${tenant} ${id}`);
  return hints;
}

/** The API's message, naming the deletion when the body carries its id and the message does not. */
export function messageOf(error: ApiError): string {
  const id = error.code === 'StreamDeleting' ? deletionIdOf(error) : undefined;
  return id === undefined || error.message.includes(id)
    ? error.message
    : `${error.message} (deletion ${id})`;
}

/**
 * What to run about a refusal that comes of a tenant's offboarding: a stream created under a
 * tenant being offboarded (TenantDeleting), a cancel that came too late.
 */
export function tenantHints(error: ApiError, tenant: string | undefined): string[] {
  if (tenant === undefined) return [];
  if (error.code === 'TenantDeleting') {
    return [`hint: the tenant is being offboarded: lethe tenants get ${tenant}`];
  }
  if (error.code === 'OffboardingNotCancellable') {
    return [`follow it: lethe tenants get ${tenant}`];
  }
  return [];
}
