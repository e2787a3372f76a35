import type { APIGatewayProxyResult } from 'aws-lambda';
import { vi } from 'vitest';
import { createHttpApi } from '../../lib/api/http-api.ts';
import { type Operation, ROUTES } from '../../lib/api/routes.ts';
import {
  BadRequestError,
  DeletionNotFoundError,
  DeletionNotRetryableError,
  StreamDeletingError,
  StreamNotFoundError,
} from '../../lib/errors.ts';
import type { EventWriter } from '../../lib/ingest.ts';
import type { StreamRegistry } from '../../lib/registry.ts';
import { apiEvent } from './events.ts';
import { fake } from './fakes.ts';
import { aDeletion, aStream, DELETION_ID } from './records.ts';

/*
 * What each operation of the api can meet, to check the OpenAPI document against what the
 * handler actually answers.
 */

export const MAX_EVENTS_BYTES = 256;

type Fault = Partial<
  Record<
    | 'create'
    | 'get'
    | 'list'
    | 'admitIngest'
    | 'requestDeletion'
    | 'getDeletion'
    | 'retryDeletion'
    | 'failures',
    unknown
  >
>;

/** The api handler over a registry that succeeds, except where `fault` says what it answers. */
function handlerWith(fault: Fault = {}) {
  const answer = <T>(name: keyof Fault, value: T) =>
    vi.fn(async () => {
      const override = fault[name];
      if (override instanceof Error) throw override;
      return (override ?? value) as T;
    });
  const registry = {
    create: answer('create', { created: true, stream: aStream() }),
    get: answer('get', aStream()),
    list: answer('list', { streams: [aStream()] }),
    admitIngest: answer('admitIngest', aStream()),
    requestDeletion: answer('requestDeletion', {
      created: true,
      deletion: aDeletion({ state: 'PENDING' }),
    }),
    getDeletion: answer('getDeletion', aDeletion()),
    retryDeletion: answer('retryDeletion', aDeletion({ state: 'PENDING', round: 2, attempts: 2 })),
    failures: answer('failures', []),
    // The api releases every admitted ingest once its write ends (ingests in flight are counted).
    releaseIngest: vi.fn(async () => {}),
  };
  const writer = { write: vi.fn(async () => 'streams/acme/logs/1/dt=2026-03-01/e.json') };
  return createHttpApi({
    registry: fake<StreamRegistry>(registry),
    writer: fake<EventWriter>(writer),
    maxEventsBytes: MAX_EVENTS_BYTES,
  });
}

export interface Case {
  label: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: string;
  fault?: Fault;
}

const boom = new Error('boom');
export const everythingFails: Fault = Object.fromEntries(
  ['create', 'get', 'list', 'admitIngest', 'requestDeletion', 'getDeletion', 'retryDeletion'].map(
    (name) => [name, boom],
  ),
);

/** Per operation: its successes, and each failure the real registry can raise. */
export const CASES: Record<Operation, Case[]> = {
  health: [{ label: 'ok' }],
  listStreams: [
    { label: 'one page' },
    { label: 'a page with more', fault: { list: { streams: [aStream()], nextToken: 'abc' } } },
    { label: 'an empty tenant', fault: { list: { streams: [] } } },
    { label: 'limit 0', query: { limit: '0' } },
    {
      label: 'a bad token',
      query: { nextToken: 'x' },
      fault: { list: new BadRequestError('InvalidNextToken', 'nextToken is not valid') },
    },
  ],
  createStream: [
    { label: 'new' },
    { label: 'already ACTIVE', fault: { create: { created: false, stream: aStream() } } },
    {
      label: 'being deleted',
      fault: { create: new StreamDeletingError('acme', 'logs', DELETION_ID, 30) },
    },
  ],
  getStream: [
    { label: 'ACTIVE' },
    {
      label: 'DELETING',
      fault: { get: aStream({ state: 'DELETING', deletionId: DELETION_ID }) },
    },
    { label: 'missing', fault: { get: new StreamNotFoundError('acme', 'logs') } },
  ],
  deleteStream: [
    { label: 'accepted' },
    {
      label: 'a repeat while it runs',
      fault: { requestDeletion: { created: false, deletion: aDeletion({ objectsDeleted: 5 }) } },
    },
    { label: 'missing', fault: { requestDeletion: new StreamNotFoundError('acme', 'logs') } },
  ],
  ingestEvents: [
    { label: 'a batch', body: '[{"level":"info"},{"level":"warn"}]' },
    { label: 'bad JSON', body: '[{' },
    { label: 'an object', body: '{"level":"info"}' },
    { label: 'an empty array', body: '[]' },
    { label: 'too large', body: JSON.stringify(['x'.repeat(MAX_EVENTS_BYTES)]) },
    {
      label: 'a missing stream',
      body: '[1]',
      fault: { admitIngest: new StreamNotFoundError('acme', 'logs') },
    },
    {
      label: 'a stream being deleted',
      body: '[1]',
      fault: { admitIngest: new StreamDeletingError('acme', 'logs', DELETION_ID, 30) },
    },
  ],
  getDeletion: [
    { label: 'RUNNING' },
    {
      label: 'COMPLETED',
      fault: {
        getDeletion: aDeletion({
          state: 'COMPLETED',
          objectsDeleted: 10,
          bytesDeleted: 100,
          completedAt: '2026-03-01T11:05:00.000Z',
        }),
      },
    },
    {
      label: 'FAILED with keys',
      fault: {
        getDeletion: aDeletion({ state: 'FAILED', failedObjects: 1 }),
        failures: [
          { key: 'streams/acme/logs/1/a', code: 'AccessDenied', message: 'Access Denied' },
        ],
      },
    },
    {
      label: 'FAILED, stalled',
      fault: {
        getDeletion: aDeletion({
          state: 'FAILED',
          reason: { code: 'Stalled', message: 'no progress' },
        }),
      },
    },
    { label: 'missing', fault: { getDeletion: new DeletionNotFoundError('acme', DELETION_ID) } },
    { label: 'a bad id', params: { deletionId: 'not-a-uuid' } },
  ],
  retryDeletion: [
    { label: 'restarted' },
    { label: 'missing', fault: { retryDeletion: new DeletionNotFoundError('acme', DELETION_ID) } },
    {
      label: 'completed',
      fault: {
        retryDeletion: new DeletionNotRetryableError(
          `deletion ${DELETION_ID} has already completed`,
        ),
      },
    },
    { label: 'a bad id', params: { deletionId: 'NOT-A-UUID' } },
  ],
};

/** Calls the api handler for one case of an operation, with valid names unless it says otherwise. */
export function invoke(operation: Operation, testCase: Case): Promise<APIGatewayProxyResult> {
  const route = ROUTES.find((candidate) => candidate.operation === operation);
  if (!route) throw new Error(`no route ${operation}`);
  const names = [...route.resource.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
  const defaults: Record<string, string> = {
    tenant: 'acme',
    stream: 'logs',
    deletionId: DELETION_ID,
  };
  const pathParameters = Object.fromEntries(
    names.map((name) => [name, testCase.params?.[name] ?? defaults[name] ?? '']),
  );
  return handlerWith(testCase.fault)(
    apiEvent({
      method: route.method,
      resource: route.resource,
      ...(names.length > 0 ? { pathParameters } : {}),
      ...(testCase.query ? { query: testCase.query } : {}),
      ...(testCase.body !== undefined ? { body: testCase.body } : {}),
    }),
  );
}

/** The name-shaped path parameters of an operation, each broken in turn. */
export function invalidNameCases(operation: Operation): Case[] {
  const route = ROUTES.find((candidate) => candidate.operation === operation);
  return ['tenant', 'stream']
    .filter((name) => route?.resource.includes(`{${name}}`))
    .map((name) => ({
      label: `an invalid ${name} name`,
      params: { [name]: 'Not_Valid' },
      body: '[1]',
    }));
}
