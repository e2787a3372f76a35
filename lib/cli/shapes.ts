import { DELETION_STATES, OFFBOARDING_STATES, PLAN_STATES, STREAM_STATES } from '../core/index.ts';
import { excerpt, NotLetheError } from './answers.ts';

/** A member's type, or the values it may take. */
type Member = 'string' | 'number' | 'object' | readonly string[];

/** The members the CLI reads of an answer: each of Lethe's answers of that kind has them. */
export type Shape = Readonly<Record<string, Member>>;

/** `state` first: what an answer without one is said to lack. */
const receipt = {
  state: DELETION_STATES,
  deletionId: 'string',
  tenant: 'string',
  stream: 'string',
  generation: 'number',
  objectsDeleted: 'number',
  bytesDeleted: 'number',
  attempts: 'number',
} as const;

const stream = {
  state: STREAM_STATES,
  tenant: 'string',
  stream: 'string',
  generation: 'number',
  location: 'string',
} as const;

export const SHAPES = {
  stream,
  receipt,
  plan: {
    state: PLAN_STATES,
    planId: 'string',
    tenant: 'string',
    stream: 'string',
    objects: 'number',
  },
  offboarding: {
    state: [...OFFBOARDING_STATES, 'SCHEDULED'],
    tenant: 'string',
    streams: 'number',
    deletionStates: 'object',
    objectsDeleted: 'number',
  },
  key: { keyId: 'string', publicKeyPem: 'string' },
  certificate: { certificate: 'object', signature: 'string', keyId: 'string' },
  ingested: { key: 'string', count: 'number' },
} as const satisfies Record<string, Shape>;

/** A page of a list: its items, each of `item`'s shape. */
export interface Page {
  readonly items: string;
  readonly item: Shape;
}

/**
 * The answer, if it has every member of `shape` (and, for a page, every item does): JSON that
 * lacks one is not Lethe's, and printing it would print `undefined`, or wait for ever.
 */
export function shaped<T>(body: T, shape: Shape | Page): T {
  if (!isPage(shape)) {
    check(body, shape);
    return body;
  }
  const items = (body as Record<string, unknown>)[shape.items];
  if (!Array.isArray(items)) throw notLethe(body, `no ${shape.items} list`);
  for (const item of items) check(item, shape.item);
  return body;
}

const isPage = (shape: Shape | Page): shape is Page =>
  typeof shape.items === 'string' && typeof shape.item === 'object';

function check(value: unknown, shape: Shape): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw notLethe(value, 'an item that is not an object');
  }
  for (const [name, member] of Object.entries(shape)) {
    const found = (value as Record<string, unknown>)[name];
    if (found === undefined) throw notLethe(value, `no ${name}`);
    const fits =
      typeof member === 'string'
        ? member === 'object'
          ? found !== null && typeof found === 'object'
          : typeof found === member
        : member.includes(found as string);
    if (!fits) throw notLethe(value, `a ${name} of ${excerpt(JSON.stringify(found))}`);
  }
}

const notLethe = (value: unknown, what: string) =>
  new NotLetheError(
    `the answer has ${what}, so it is not Lethe's: ${excerpt(JSON.stringify(value) ?? String(value))}`,
  );
