import { isUtf8 } from 'node:buffer';
import {
  assertValidName,
  BadRequestError,
  DELETION_STATES,
  type DeletionState,
  isDeletionId,
} from '../core/index.ts';
import { MAX_GRACE_SECONDS } from '../support/index.ts';

/** A request as the operations see it: path parameters, query, raw body. */
export interface Request {
  params: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  body: Buffer;
}

/** What a request was about, as far as its path and answer tell: for the request's log line. */
export interface Subject {
  tenant?: string;
  stream?: string;
  deletionId?: string;
  planId?: string;
  generation?: number;
}

/** An operation's answer, before it becomes an API Gateway result. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** What the answer is about, beyond the path (a new deletion's id, a generation). */
  subject?: Subject;
}

export type Operations<K extends string> = Record<K, (request: Request) => Promise<Reply>>;

export const tenantOf = (request: Request) => assertValidName('tenant', request.params.tenant);
export const streamOf = (request: Request) => assertValidName('stream', request.params.stream);

export function deletionIdOf(request: Request): string {
  const id = request.params.deletionId;
  if (!isDeletionId(id)) {
    throw new BadRequestError('InvalidDeletionId', 'deletionId must be a lowercase UUID');
  }
  return id;
}

export function planIdOf(request: Request): string {
  const id = request.params.planId;
  if (!isDeletionId(id)) {
    throw new BadRequestError('InvalidPlanId', 'planId must be a lowercase UUID');
  }
  return id;
}

/** An integer query parameter within bounds, or the default when absent. */
function integer(
  value: string | undefined,
  bounds: { min: number; max: number; fallback: number },
) {
  if (value === undefined) return bounds.fallback;
  const number = Number(value);
  return /^\d+$/.test(value) && number >= bounds.min && number <= bounds.max ? number : undefined;
}

export function limitOf(request: Request): number {
  const limit = integer(request.query.limit, { min: 1, max: 100, fallback: 50 });
  if (limit === undefined) {
    throw new BadRequestError('InvalidLimit', 'limit must be an integer from 1 to 100');
  }
  return limit;
}

export function graceOf(request: Request, fallback: number): number {
  const grace = integer(request.query.graceSeconds, { min: 0, max: MAX_GRACE_SECONDS, fallback });
  if (grace === undefined) {
    throw new BadRequestError(
      'InvalidGrace',
      `graceSeconds must be an integer from 0 to ${MAX_GRACE_SECONDS} (30 days)`,
    );
  }
  return grace;
}

export function stateOf(request: Request): DeletionState | undefined {
  const state = request.query.state;
  if (state === undefined) return undefined;
  if (!(DELETION_STATES as readonly string[]).includes(state)) {
    throw new BadRequestError('InvalidState', `state must be one of ${DELETION_STATES.join(', ')}`);
  }
  return state as DeletionState;
}

/**
 * Deepest nesting of arrays and objects an events body may have, the batch's array included.
 * Deeper JSON parses, but writing it out again (and most readers of it) recurses once a level.
 */
export const MAX_EVENTS_NESTING = 100;

/** How deeply a JSON text nests arrays and objects, read without recursion. */
export function nestingOf(json: Buffer): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < json.length; index++) {
    const byte = json[index];
    if (inString) {
      if (byte === 0x5c)
        index++; // a backslash escapes the next character
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (byte === 0x5d || byte === 0x7d) depth--;
  }
  return deepest;
}

/**
 * The body as text, refused unless it is UTF-8 as JSON must be (RFC 8259): a lenient decoding
 * would put U+FFFD where the bytes were and store something the user did not send.
 */
export function jsonTextOf(body: Buffer): string {
  const text = body.toString('utf8');
  if (isUtf8(body)) return text;
  const at = firstDifference(body, Buffer.from(text, 'utf8'));
  throw new BadRequestError(
    'InvalidJson',
    `the body is not UTF-8 text, as JSON must be: invalid UTF-8 at byte offset ${at} (0x${body[at]?.toString(16).padStart(2, '0')})`,
  );
}

const firstDifference = (a: Buffer, b: Buffer) => {
  let index = 0;
  while (index < a.length && a[index] === b[index]) index++;
  return index;
};

export function eventsOf(body: Buffer): unknown[] {
  const text = jsonTextOf(body);
  let events: unknown;
  try {
    events = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError('InvalidJson', invalidJsonMessage(body, error));
  }
  if (!Array.isArray(events)) {
    throw new BadRequestError('NotAnArray', 'the body must be a JSON array of events');
  }
  if (nestingOf(body) > MAX_EVENTS_NESTING) {
    throw new BadRequestError(
      'NestingTooDeep',
      `the events nest arrays and objects more than ${MAX_EVENTS_NESTING} levels deep (the batch's array counts as one)`,
    );
  }
  if (events.length === 0) {
    throw new BadRequestError('EmptyBatch', 'the array of events is empty');
  }
  return events;
}

/** Where the body stops being JSON, and a hint when it is one JSON value per line. */
function invalidJsonMessage(body: Buffer, error: unknown): string {
  const detail = error instanceof SyntaxError ? `: ${error.message}` : '';
  const lines = body
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const isNdjson =
    lines.length > 1 &&
    lines.every((line) => {
      try {
        JSON.parse(line);
        return true;
      } catch {
        return false;
      }
    });
  const hint = isNdjson
    ? '; it looks like NDJSON (one event per line): send a JSON array, [event, event, ...]'
    : '';
  return `the body is not valid JSON${detail}${hint}`;
}

/** 202 for a deletion that was accepted, with where to follow it. */
export const accepted = (
  tenant: string,
  body: { deletionId: string; stream: string; generation: number },
): Reply => ({
  status: 202,
  body,
  headers: { Location: `/v1/tenants/${tenant}/deletions/${body.deletionId}` },
  subject: { deletionId: body.deletionId, stream: body.stream, generation: body.generation },
});
