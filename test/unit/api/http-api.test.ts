import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createHttpApi } from '../../lib/api/http-api.ts';
import { StreamDeletingError } from '../../lib/errors.ts';
import type { EventWriter } from '../../lib/ingest.ts';
import type { StreamRegistry } from '../../lib/registry.ts';
import { type ApiRequest, apiEvent } from '../helpers/events.ts';
import { fake } from '../helpers/fakes.ts';
import { aDeletion, aStream, DELETION_ID } from '../helpers/records.ts';

const STREAM = '/v1/tenants/{tenant}/streams/{stream}';
const EVENTS = '/v1/tenants/{tenant}/streams/{stream}/events';
const STREAMS = '/v1/tenants/{tenant}/streams';
const DELETION = '/v1/tenants/{tenant}/deletions/{deletionId}';
const acmeLogs = { tenant: 'acme', stream: 'logs' };
const MAX_EVENTS_BYTES = 64;

/** An api over a registry and writer that succeed, unless a test says otherwise. */
function api() {
  const registry = {
    create: vi.fn<StreamRegistry['create']>(async () => ({ created: true, stream: aStream() })),
    get: vi.fn<StreamRegistry['get']>(async () => aStream()),
    list: vi.fn<StreamRegistry['list']>(async () => ({ streams: [aStream()] })),
    admitIngest: vi.fn<StreamRegistry['admitIngest']>(async () => aStream()),
    releaseIngest: vi.fn<StreamRegistry['releaseIngest']>(async () => {}),
    requestDeletion: vi.fn<StreamRegistry['requestDeletion']>(async () => ({
      created: true,
      deletion: aDeletion({ state: 'PENDING' }),
    })),
    getDeletion: vi.fn<StreamRegistry['getDeletion']>(async () => aDeletion()),
    failures: vi.fn<StreamRegistry['failures']>(async () => []),
  };
  const writer = { write: vi.fn<EventWriter['write']>(async () => 'streams/acme/logs/1/e.json') };
  const onUnexpectedError = vi.fn<(error: unknown, event: APIGatewayProxyEvent) => void>();
  const handler = createHttpApi({
    registry: fake<StreamRegistry>(registry),
    writer: fake<EventWriter>(writer),
    maxEventsBytes: MAX_EVENTS_BYTES,
    onUnexpectedError,
  });
  return { handler, registry, writer, onUnexpectedError };
}

const errorCodeOf = (body: string) =>
  (JSON.parse(body) as { error?: { code?: string } }).error?.code;

describe.each<[string, ApiRequest, number, string | undefined]>([
  ['health', { method: 'GET', resource: '/v1/health' }, 200, undefined],
  ['create', { method: 'PUT', resource: STREAM, pathParameters: acmeLogs }, 201, undefined],
  ['get', { method: 'GET', resource: STREAM, pathParameters: acmeLogs }, 200, undefined],
  [
    'list',
    { method: 'GET', resource: STREAMS, pathParameters: { tenant: 'acme' } },
    200,
    undefined,
  ],
  [
    'ingest',
    { method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '[{"a":1},{"b":2}]' },
    201,
    undefined,
  ],
  ['delete', { method: 'DELETE', resource: STREAM, pathParameters: acmeLogs }, 202, undefined],
  [
    'receipt',
    {
      method: 'GET',
      resource: DELETION,
      pathParameters: { tenant: 'acme', deletionId: DELETION_ID },
    },
    200,
    undefined,
  ],
  [
    'an uppercase tenant',
    { method: 'PUT', resource: STREAM, pathParameters: { tenant: 'Acme', stream: 'logs' } },
    400,
    'InvalidName',
  ],
  [
    'a stream name with a slash',
    { method: 'GET', resource: STREAM, pathParameters: { tenant: 'acme', stream: 'logs/1' } },
    400,
    'InvalidName',
  ],
  [
    'a stream name of 64 characters',
    {
      method: 'DELETE',
      resource: STREAM,
      pathParameters: { tenant: 'acme', stream: 'a'.repeat(64) },
    },
    400,
    'InvalidName',
  ],
  ['an unknown resource', { method: 'GET', resource: '/v1/nothing' }, 404, 'RouteNotFound'],
  [
    'a wrong method',
    { method: 'PATCH', resource: STREAM, pathParameters: acmeLogs },
    405,
    'MethodNotAllowed',
  ],
  [
    'events that are not JSON',
    { method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '[{"a":' },
    400,
    'InvalidJson',
  ],
  [
    'events that are not an array',
    { method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '{"a":1}' },
    400,
    'NotAnArray',
  ],
  [
    'events larger than the limit',
    {
      method: 'POST',
      resource: EVENTS,
      pathParameters: acmeLogs,
      body: `["${'x'.repeat(MAX_EVENTS_BYTES)}"]`,
    },
    413,
    'PayloadTooLarge',
  ],
])('%s', (_, request, status, code) => {
  it(`answers ${status}${code ? ` ${code}` : ''}`, async () => {
    const { handler } = api();

    const response = await handler(apiEvent(request));

    expect(response.statusCode).toBe(status);
    expect(errorCodeOf(response.body)).toBe(code);
  });
});

describe('createHttpApi', () => {
  it('answers health with {"status":"ok"}', async () => {
    const { handler } = api();

    const response = await handler(apiEvent({ method: 'GET', resource: '/v1/health' }));

    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
  });

  it('answers 200, not 201, for a stream that is already ACTIVE', async () => {
    const { handler, registry } = api();
    registry.create.mockResolvedValue({ created: false, stream: aStream() });

    const response = await handler(
      apiEvent({ method: 'PUT', resource: STREAM, pathParameters: acmeLogs }),
    );

    expect(response.statusCode).toBe(200);
  });

  it('does not reach the registry with an invalid name', async () => {
    const { handler, registry } = api();

    await handler(
      apiEvent({
        method: 'DELETE',
        resource: STREAM,
        pathParameters: { tenant: 'acme', stream: '_x!' },
      }),
    );

    expect(registry.requestDeletion).not.toHaveBeenCalled();
  });

  it('lists the allowed methods in the Allow header of a 405', async () => {
    const { handler } = api();

    const response = await handler(
      apiEvent({ method: 'POST', resource: STREAM, pathParameters: acmeLogs }),
    );

    expect(response.headers?.Allow).toBe('PUT, GET, DELETE');
  });

  it('admits no ingest for a body it rejects', async () => {
    const { handler, registry, writer } = api();

    await handler(
      apiEvent({ method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '{}' }),
    );

    expect(registry.admitIngest).not.toHaveBeenCalled();
    expect(writer.write).not.toHaveBeenCalled();
  });

  it('answers an ingest with the key written and the number of events', async () => {
    const { handler } = api();

    const response = await handler(
      apiEvent({ method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '[1,2,3]' }),
    );

    expect(JSON.parse(response.body)).toEqual({ key: 'streams/acme/logs/1/e.json', count: 3 });
  });

  it('answers a DELETE with 202, the receipt and a Location of the deletion', async () => {
    const { handler } = api();

    const response = await handler(
      apiEvent({ method: 'DELETE', resource: STREAM, pathParameters: acmeLogs }),
    );

    expect(response.statusCode).toBe(202);
    expect(response.headers?.Location).toBe(`/v1/tenants/acme/deletions/${DELETION_ID}`);
    expect(JSON.parse(response.body)).toMatchObject({
      deletionId: DELETION_ID,
      state: 'PENDING',
      location: 's3://lethe-data/streams/acme/logs/1/',
    });
  });

  it('answers a StreamDeletingError with 409 StreamDeleting and Retry-After', async () => {
    const { handler, registry } = api();
    registry.create.mockRejectedValue(new StreamDeletingError('acme', 'logs', DELETION_ID, 30));

    const response = await handler(
      apiEvent({ method: 'PUT', resource: STREAM, pathParameters: acmeLogs }),
    );

    expect(response.statusCode).toBe(409);
    expect(response.headers?.['Retry-After']).toBe('30');
    expect(errorCodeOf(response.body)).toBe('StreamDeleting');
  });

  it('answers an unexpected error with 500 InternalError and reports it', async () => {
    const { handler, registry, onUnexpectedError } = api();
    const bug = new TypeError('cannot read properties of undefined');
    registry.get.mockRejectedValue(bug);
    const event = apiEvent({ method: 'GET', resource: STREAM, pathParameters: acmeLogs });

    const response = await handler(event);

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: 'InternalError', message: 'unexpected error' },
    });
    expect(onUnexpectedError).toHaveBeenCalledExactlyOnceWith(bug, event);
  });

  it('does not report a caller error as unexpected', async () => {
    const { handler, onUnexpectedError } = api();

    await handler(apiEvent({ method: 'GET', resource: '/v1/nothing' }));

    expect(onUnexpectedError).not.toHaveBeenCalled();
  });
});
