import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createHttpApi, type HttpApiOptions, type Receipts } from '../../../lib/api/index.ts';
import {
  type DeletionRecord,
  fenced,
  NO_COUNTS,
  type PlanRecord,
  StreamDeletingError,
  toReceipt,
} from '../../../lib/core/index.ts';
import type { EventWriter } from '../../../lib/s3/index.ts';
import type { DeletionIndex, DeletionStore, StreamStore } from '../../../lib/store/index.ts';
import { type ApiRequest, apiEvent } from '../../helpers/events.ts';
import { aDeletion, aStream, DELETION_ID, NOW } from '../../helpers/records.ts';
import { localSigner } from '../../helpers/signer.ts';

const STREAM = '/v1/tenants/{tenant}/streams/{stream}';
const EVENTS = '/v1/tenants/{tenant}/streams/{stream}/events';
const STREAMS = '/v1/tenants/{tenant}/streams';
const DELETIONS = '/v1/tenants/{tenant}/deletions';
const DELETION = '/v1/tenants/{tenant}/deletions/{deletionId}';
const acmeLogs = { tenant: 'acme', stream: 'logs' };
const acmeDeletion = { tenant: 'acme', deletionId: DELETION_ID };
const MAX_EVENTS_BYTES = 64;
const DEFAULT_GRACE_SECONDS = 600;

/** An api over stores and a writer that succeed, unless a test says otherwise. */
function api(overrides: Partial<HttpApiOptions> = {}) {
  const streams = {
    create: vi.fn<StreamStore['create']>(async () => ({ created: true, stream: aStream() })),
    get: vi.fn<StreamStore['get']>(async () => aStream()),
    list: vi.fn<StreamStore['list']>(async () => ({ streams: [aStream()] })),
    admitIngest: vi.fn<StreamStore['admitIngest']>(async () => ({
      ...aStream(),
      ingestId: 'ingest-1',
    })),
    releaseIngest: vi.fn<StreamStore['releaseIngest']>(async () => {}),
    abandonIngest: vi.fn<StreamStore['abandonIngest']>(async () => {}),
    setRetention: vi.fn<StreamStore['setRetention']>(async () => aStream({ retentionDays: 30 })),
    refusal: vi.fn<StreamStore['refusal']>(
      (stream) => new StreamDeletingError(stream, 30, new Date(NOW)),
    ),
  } satisfies HttpApiOptions['streams'];
  const deletions = {
    request: vi.fn<DeletionStore['request']>(async () => ({
      created: true,
      deletion: aDeletion({ state: 'PENDING' }),
    })),
    retry: vi.fn<DeletionStore['retry']>(async () =>
      aDeletion({ state: 'PENDING', round: 2, attempts: 2 }),
    ),
    cancel: vi.fn<DeletionStore['cancel']>(async () => aDeletion({ state: 'CANCELLED' })),
    expedite: vi.fn<DeletionStore['expedite']>(async () => aDeletion({ state: 'PENDING' })),
    requestPartitions: vi.fn<DeletionStore['requestPartitions']>(async () => ({
      created: true,
      deletion: aDeletion({ state: 'PENDING', before: '2026-02-01' }),
    })),
  } satisfies HttpApiOptions['deletions'];
  const index = {
    list: vi.fn<DeletionIndex['list']>(async () => ({ deletions: [aDeletion()] })),
  } satisfies HttpApiOptions['index'];
  const receipts = {
    get: vi.fn<Receipts['get']>(async () => toReceipt(aDeletion({ stream: 'clicks' }))),
    of: vi.fn<Receipts['of']>(async (deletion) => toReceipt(deletion)),
  } satisfies HttpApiOptions['receipts'];
  const writer = {
    write: vi.fn<EventWriter['write']>(async () => 'streams/acme/logs/1/e.json'),
  } satisfies HttpApiOptions['writer'];
  const onUnexpectedError = vi.fn<(error: unknown, event: APIGatewayProxyEvent) => void>();
  const handler = createHttpApi({
    streams,
    deletions,
    index,
    receipts,
    writer,
    maxEventsBytes: MAX_EVENTS_BYTES,
    defaultGraceSeconds: DEFAULT_GRACE_SECONDS,
    signer: localSigner(),
    keys: { get: async () => undefined },
    plans: {
      request: async (plan) => ({ status: 'ok', item: plan }),
      get: async () => undefined,
      totals: async () => NO_COUNTS,
    },
    pageSize: 1000,
    workerConcurrency: 20,
    offboardings: {
      request: async () => {
        throw new Error('not reached');
      },
      get: async () => undefined,
      cancel: async () => undefined,
    },
    offboarder: { view: async () => ({}), refresh: async () => 'running' },
    onUnexpectedError,
    ...overrides,
  });
  /** The api's response to a request. */
  const respond = async (request: ApiRequest) => (await handler(apiEvent(request))).response;
  return { handler, respond, streams, deletions, index, receipts, writer, onUnexpectedError };
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
  ['receipt', { method: 'GET', resource: DELETION, pathParameters: acmeDeletion }, 200, undefined],
  [
    'list deletions',
    { method: 'GET', resource: DELETIONS, pathParameters: { tenant: 'acme' } },
    200,
    undefined,
  ],
  [
    'cancel',
    { method: 'POST', resource: `${DELETION}/cancel`, pathParameters: acmeDeletion },
    200,
    undefined,
  ],
  [
    'expedite',
    { method: 'POST', resource: `${DELETION}/expedite`, pathParameters: acmeDeletion },
    202,
    undefined,
  ],
  [
    'retry',
    { method: 'POST', resource: `${DELETION}/retry`, pathParameters: acmeDeletion },
    202,
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
  [
    'a deletion id that is not a lowercase UUID',
    {
      method: 'GET',
      resource: DELETION,
      pathParameters: { tenant: 'acme', deletionId: DELETION_ID.toUpperCase() },
    },
    400,
    'InvalidDeletionId',
  ],
  [
    'a limit of 0',
    { method: 'GET', resource: STREAMS, pathParameters: { tenant: 'acme' }, query: { limit: '0' } },
    400,
    'InvalidLimit',
  ],
  [
    'an unknown deletion state',
    {
      method: 'GET',
      resource: DELETIONS,
      pathParameters: { tenant: 'acme' },
      query: { state: 'DONE' },
    },
    400,
    'InvalidState',
  ],
  [
    'a grace window over 30 days',
    {
      method: 'DELETE',
      resource: STREAM,
      pathParameters: acmeLogs,
      query: { graceSeconds: '2592001' },
    },
    400,
    'InvalidGrace',
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
    'an empty batch of events',
    { method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '[]' },
    400,
    'EmptyBatch',
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
    // Prepare
    const { respond } = api();

    // Act
    const response = await respond(request);

    // Assess
    expect(response.statusCode).toBe(status);
    expect(errorCodeOf(response.body)).toBe(code);
  });
});

describe('createHttpApi, answers', () => {
  it('answers health with {"status":"ok"}, as JSON', async () => {
    // Prepare
    const { respond } = api();

    // Act
    const response = await respond({ method: 'GET', resource: '/v1/health' });

    // Assess
    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
    expect(response.headers?.['Content-Type']).toBe('application/json');
  });

  it('answers 200, not 201, for a stream that is already ACTIVE', async () => {
    // Prepare
    const { respond, streams } = api();
    streams.create.mockResolvedValue({ created: false, stream: aStream() });

    // Act
    const response = await respond({ method: 'PUT', resource: STREAM, pathParameters: acmeLogs });

    // Assess
    expect(response.statusCode).toBe(200);
  });

  it('does not reach the stores with an invalid name', async () => {
    // Prepare
    const { respond, deletions } = api();

    // Act
    await respond({
      method: 'DELETE',
      resource: STREAM,
      pathParameters: { tenant: 'acme', stream: '_x!' },
    });

    // Assess
    expect(deletions.request).not.toHaveBeenCalled();
  });

  it('does not read a receipt for an invalid deletion id', async () => {
    // Prepare
    const { respond, receipts } = api();

    // Act
    await respond({
      method: 'GET',
      resource: DELETION,
      pathParameters: { tenant: 'acme', deletionId: 'abc' },
    });

    // Assess
    expect(receipts.get).not.toHaveBeenCalled();
  });

  it('lists the allowed methods in the Allow header of a 405', async () => {
    // Prepare
    const { respond } = api();

    // Act
    const response = await respond({ method: 'POST', resource: STREAM, pathParameters: acmeLogs });

    // Assess
    expect(response.headers?.Allow).toBe('PUT, GET, DELETE');
  });

  it('lists a page of streams, 50 by default, from the token it is given', async () => {
    // Prepare
    const { respond, streams } = api();
    streams.list.mockResolvedValue({ streams: [aStream()], nextToken: 'next' });

    // Act
    const response = await respond({
      method: 'GET',
      resource: STREAMS,
      pathParameters: { tenant: 'acme' },
      query: { nextToken: 'token' },
    });

    // Assess
    expect(streams.list).toHaveBeenCalledExactlyOnceWith('acme', 50, 'token');
    expect(JSON.parse(response.body)).toMatchObject({
      streams: [{ tenant: 'acme', stream: 'logs', state: 'ACTIVE' }],
      nextToken: 'next',
    });
  });

  it('answers a StreamDeletingError with 409 StreamDeleting and Retry-After', async () => {
    // Prepare
    const { respond, streams } = api();
    streams.create.mockRejectedValue(
      new StreamDeletingError({ tenant: 'acme', stream: 'logs', deletionId: DELETION_ID }, 30, NOW),
    );

    // Act
    const response = await respond({ method: 'PUT', resource: STREAM, pathParameters: acmeLogs });

    // Assess
    expect(response.statusCode).toBe(409);
    expect(response.headers?.['Retry-After']).toBe('30');
    expect(errorCodeOf(response.body)).toBe('StreamDeleting');
  });

  it('answers an unexpected error with 500 InternalError and reports it', async () => {
    // Prepare
    const { handler, streams, onUnexpectedError } = api();
    const bug = new TypeError('cannot read properties of undefined');
    streams.get.mockRejectedValue(bug);
    const event = apiEvent({ method: 'GET', resource: STREAM, pathParameters: acmeLogs });

    // Act
    const { response } = await handler(event);

    // Assess
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: 'InternalError', message: 'unexpected error' },
    });
    expect(onUnexpectedError).toHaveBeenCalledExactlyOnceWith(bug, event);
  });

  it('answers 200 to a cancelled offboarding whose deletions it could not all cancel yet', async () => {
    // Prepare: the cancel is committed; cancelling one of its deletions was throttled, which
    // the sweeper finishes (it begins none of the tenant's due deletions until it has)
    const cancelled = {
      type: 'OFFBOARDING',
      tenant: 'acme',
      offboardingId: 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a',
      state: 'CANCELLED',
      requestedAt: NOW.toISOString(),
      executeAfter: new Date(NOW.getTime() + 86_400_000).toISOString(),
      updatedAt: NOW.toISOString(),
      fannedOut: true,
      streams: 2,
    } as const;
    const refresh = vi.fn(async () => {
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    });
    const { respond, onUnexpectedError } = api({
      offboardings: {
        request: async () => {
          throw new Error('not reached');
        },
        get: async () => cancelled,
        cancel: async () => cancelled,
      },
      offboarder: { view: async () => ({ tenant: 'acme', state: 'CANCELLED' }), refresh },
    });

    // Act
    const response = await respond({
      method: 'POST',
      resource: '/v1/tenants/{tenant}/offboarding/cancel',
      pathParameters: { tenant: 'acme' },
    });

    // Assess
    expect(refresh).toHaveBeenCalledExactlyOnceWith(cancelled);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ tenant: 'acme', state: 'CANCELLED' });
    expect(onUnexpectedError).not.toHaveBeenCalled();
  });

  it('does not report a caller error as unexpected', async () => {
    // Prepare
    const { respond, onUnexpectedError } = api();

    // Act
    await respond({ method: 'GET', resource: '/v1/nothing' });

    // Assess
    expect(onUnexpectedError).not.toHaveBeenCalled();
  });
});

describe('createHttpApi, ingest', () => {
  const ingest = (body: string) =>
    ({ method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body }) as const;
  /** An ingest whose body comes as the deployed API passes it: its bytes, in base64. */
  const ingestBytes = (bytes: Buffer) => ({
    ...apiEvent(ingest('')),
    body: bytes.toString('base64'),
    isBase64Encoded: true,
  });

  it('admits no ingest for a body it rejects', async () => {
    // Prepare
    const { respond, streams, writer } = api();

    // Act
    await respond(ingest('{}'));

    // Assess
    expect(streams.admitIngest).not.toHaveBeenCalled();
    expect(writer.write).not.toHaveBeenCalled();
  });

  it('writes the events under the stream it admitted', async () => {
    // Prepare
    const { respond, streams, writer } = api();
    const admitted = { ...aStream({ generation: 4 }), ingestId: 'ingest-1' };
    streams.admitIngest.mockResolvedValue(admitted);

    // Act
    await respond(ingest('[1,2,3]'));

    // Assess
    expect(streams.admitIngest).toHaveBeenCalledExactlyOnceWith('acme', 'logs');
    expect(writer.write).toHaveBeenCalledExactlyOnceWith(admitted, Buffer.from('[1,2,3]'));
  });

  it('stores the bytes sent, not the events parsed and written out again', async () => {
    // Prepare: values a JSON parser cannot hold, and a body that is not compact
    const { handler, writer } = api();
    const sent = Buffer.from('[ {"n":12345678901234567890,"x":1e400,"z":-0,"a":1,"a":2}]\n');

    // Act
    const { response } = await handler(ingestBytes(sent));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(Buffer.from(writer.write.mock.calls[0]?.[1] ?? [])).toEqual(sent);
  });

  it.each([
    ['a Latin-1 é', Buffer.from('[{"msg":"caf\xe9"}]', 'latin1'), 12, 'e9'],
    ['a lone continuation byte', Buffer.from([0x5b, 0x22, 0x80, 0x22, 0x5d]), 2, '80'],
    ['a character cut short', Buffer.from([0x5b, 0x22, 0xe2, 0x82, 0x22, 0x5d]), 2, 'e2'],
  ])(
    'refuses a body that is not UTF-8 (%s), saying where, and stores nothing',
    async (_, sent, at, byte) => {
      // Prepare
      const { handler, streams, writer } = api();

      // Act
      const { response } = await handler(ingestBytes(sent));

      // Assess
      expect(response.statusCode).toBe(400);
      const { error } = JSON.parse(response.body) as { error: { code: string; message: string } };
      expect(error.code).toBe('InvalidJson');
      expect(error.message).toContain(`invalid UTF-8 at byte offset ${at} (0x${byte})`);
      expect(streams.admitIngest).not.toHaveBeenCalled();
      expect(writer.write).not.toHaveBeenCalled();
    },
  );

  it('takes UTF-8 beyond ASCII as it is', async () => {
    // Prepare
    const { handler, writer } = api();
    const sent = Buffer.from('[{"msg":"café ✓ 🦀"}]', 'utf8');

    // Act
    const { response } = await handler(ingestBytes(sent));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(Buffer.from(writer.write.mock.calls[0]?.[1] ?? [])).toEqual(sent);
  });

  it('answers an ingest with the key written and the number of events', async () => {
    // Prepare
    const { respond } = api();

    // Act
    const response = await respond(ingest('[1,2,3]'));

    // Assess
    expect(JSON.parse(response.body)).toEqual({ key: 'streams/acme/logs/1/e.json', count: 3 });
  });

  it('releases the admitted ingest once its write ends', async () => {
    // Prepare
    const { respond, streams } = api();
    const admitted = { ...aStream({ generation: 4 }), ingestId: 'ingest-1' };
    streams.admitIngest.mockResolvedValue(admitted);

    // Act
    await respond(ingest('[1]'));

    // Assess
    expect(streams.releaseIngest).toHaveBeenCalledExactlyOnceWith(admitted);
  });

  it('abandons the admitted ingest when its write fails (S3 may still store it)', async () => {
    // Prepare
    const { respond, streams, writer } = api();
    const admitted = { ...aStream({ generation: 4 }), ingestId: 'ingest-1' };
    streams.admitIngest.mockResolvedValue(admitted);
    writer.write.mockRejectedValue(
      Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }),
    );

    // Act
    const response = await respond(ingest('[1]'));

    // Assess
    expect(response.statusCode).toBe(500);
    expect(streams.abandonIngest).toHaveBeenCalledExactlyOnceWith(admitted);
    expect(streams.releaseIngest).not.toHaveBeenCalled();
  });
});

describe('createHttpApi, plans', () => {
  const PLANS = '/v1/tenants/{tenant}/streams/{stream}/plans';

  it('plans the incarnation that is ACTIVE when one was deleted and created again meanwhile', async () => {
    // Prepare: the first plan's write finds its incarnation gone; the name is ACTIVE again
    const requested: PlanRecord[] = [];
    const { respond, streams } = api({
      plans: {
        request: async (plan) => {
          requested.push(plan);
          return requested.length === 1 ? fenced() : { status: 'ok', item: plan };
        },
        get: async () => undefined,
        totals: async () => NO_COUNTS,
      },
    });
    streams.get.mockResolvedValueOnce(aStream()).mockResolvedValueOnce(aStream({ generation: 2 }));

    // Act
    const response = await respond({ method: 'POST', resource: PLANS, pathParameters: acmeLogs });

    // Assess
    expect(response.statusCode).toBe(202);
    expect(requested.map((plan) => plan.generation)).toEqual([1, 2]);
    expect(JSON.parse(response.body)).toMatchObject({ generation: 2, state: 'PENDING' });
  });

  it('plans a stream whose deletion was requested and cancelled while its plan was written', async () => {
    // Prepare: the tombstone fenced the first write; the cancel left the same incarnation ACTIVE
    const requested: PlanRecord[] = [];
    const { respond, streams } = api({
      plans: {
        request: async (plan) => {
          requested.push(plan);
          return requested.length === 1 ? fenced() : { status: 'ok', item: plan };
        },
        get: async () => undefined,
        totals: async () => NO_COUNTS,
      },
    });
    streams.get.mockResolvedValueOnce(aStream()).mockResolvedValueOnce(aStream());

    // Act
    const response = await respond({ method: 'POST', resource: PLANS, pathParameters: acmeLogs });

    // Assess
    expect(response.statusCode).toBe(202);
    expect(requested.map((plan) => plan.generation)).toEqual([1, 1]);
  });

  it("records the bucket's key budget with the plan, which its estimate waits for", async () => {
    // Prepare
    const requested: PlanRecord[] = [];
    const { respond } = api({
      maxKeysPerSecond: 500,
      plans: {
        request: async (plan) => {
          requested.push(plan);
          return { status: 'ok', item: plan };
        },
        get: async () => undefined,
        totals: async () => NO_COUNTS,
      },
    });

    // Act
    await respond({ method: 'POST', resource: PLANS, pathParameters: acmeLogs });

    // Assess
    expect(requested.map((plan) => plan.maxKeysPerSecond)).toEqual([500]);
  });

  it('refuses a plan of a stream that began deleting meanwhile with 409 StreamDeleting', async () => {
    // Prepare
    const { respond, streams } = api({
      plans: {
        request: async () => fenced(),
        get: async () => undefined,
        totals: async () => NO_COUNTS,
      },
    });
    streams.get
      .mockResolvedValueOnce(aStream())
      .mockResolvedValueOnce(aStream({ state: 'DELETING', deletionId: DELETION_ID }));

    // Act
    const response = await respond({ method: 'POST', resource: PLANS, pathParameters: acmeLogs });

    // Assess
    expect(response.statusCode).toBe(409);
    expect(errorCodeOf(response.body)).toBe('StreamDeleting');
  });
});

describe('createHttpApi, deletions', () => {
  const deleteLogs = (query?: Record<string, string>) =>
    ({
      method: 'DELETE',
      resource: STREAM,
      pathParameters: acmeLogs,
      ...(query ? { query } : {}),
    }) as const;

  it('answers a DELETE with 202, the receipt and a Location of the deletion', async () => {
    // Prepare
    const { respond } = api();

    // Act
    const response = await respond(deleteLogs());

    // Assess
    expect(response.statusCode).toBe(202);
    expect(response.headers?.Location).toBe(`/v1/tenants/acme/deletions/${DELETION_ID}`);
    expect(JSON.parse(response.body)).toMatchObject({
      deletionId: DELETION_ID,
      state: 'PENDING',
      location: 's3://lethe-data/streams/acme/logs/1/',
    });
  });

  it("answers a repeated DELETE with the deletion under way and its chains' exact totals", async () => {
    // Prepare: the record holds no totals while it runs; the receipt sums its chains
    const { respond, deletions, receipts } = api();
    const running = aDeletion({ state: 'RUNNING' });
    deletions.request.mockResolvedValue({ created: false, deletion: running });
    receipts.of.mockImplementation(async (deletion) =>
      toReceipt(deletion, { objectsDeleted: 1200, bytesDeleted: 4096, failedObjects: 0 }),
    );

    // Act
    const repeated = JSON.parse((await respond(deleteLogs())).body);
    deletions.request.mockResolvedValue({ created: true, deletion: running });
    receipts.of.mockClear();
    const first = JSON.parse((await respond(deleteLogs())).body);

    // Assess
    expect(repeated).toMatchObject({ state: 'RUNNING', objectsDeleted: 1200, bytesDeleted: 4096 });
    expect(first).toMatchObject({ objectsDeleted: 0 });
    expect(receipts.of).not.toHaveBeenCalled();
  });

  it('requests the deletion with the default grace window when the request names none', async () => {
    // Prepare
    const { respond, deletions } = api();

    // Act
    await respond(deleteLogs());

    // Assess
    expect(deletions.request).toHaveBeenCalledExactlyOnceWith(
      'acme',
      'logs',
      DEFAULT_GRACE_SECONDS,
    );
  });

  it('requests the deletion with the grace window the request names', async () => {
    // Prepare
    const { respond, deletions } = api();

    // Act
    await respond(deleteLogs({ graceSeconds: '0' }));

    // Assess
    expect(deletions.request).toHaveBeenCalledExactlyOnceWith('acme', 'logs', 0);
  });

  it('answers a receipt read by tenant and id', async () => {
    // Prepare
    const { respond, receipts } = api();

    // Act
    const response = await respond({
      method: 'GET',
      resource: DELETION,
      pathParameters: acmeDeletion,
    });

    // Assess
    expect(receipts.get).toHaveBeenCalledExactlyOnceWith('acme', DELETION_ID);
    expect(JSON.parse(response.body)).toMatchObject({ deletionId: DELETION_ID, stream: 'clicks' });
  });

  it('lists a page of deletions as receipts, with the limit, state and token asked for', async () => {
    // Prepare
    const { respond, index } = api();
    index.list.mockResolvedValue({ deletions: [aDeletion({ stream: 'clicks' })], nextToken: 'n' });

    // Act
    const response = await respond({
      method: 'GET',
      resource: DELETIONS,
      pathParameters: { tenant: 'acme' },
      query: { limit: '10', state: 'RUNNING', nextToken: 't' },
    });

    // Assess
    expect(index.list).toHaveBeenCalledExactlyOnceWith('acme', {
      limit: 10,
      state: 'RUNNING',
      nextToken: 't',
    });
    expect(JSON.parse(response.body)).toMatchObject({
      deletions: [{ deletionId: DELETION_ID, stream: 'clicks' }],
      nextToken: 'n',
    });
  });

  it.each<[string, 'retry' | 'cancel' | 'expedite', number]>([
    ['retry', 'retry', 202],
    ['cancel', 'cancel', 200],
    ['expedite', 'expedite', 202],
  ])('answers a %s with the receipt of the deletion it changed', async (path, method, status) => {
    // Prepare
    const setup = api();
    const changed: DeletionRecord = aDeletion({ stream: 'clicks', attempts: 7 });
    setup.deletions[method].mockResolvedValue(changed);

    // Act
    const response = await setup.respond({
      method: 'POST',
      resource: `${DELETION}/${path}`,
      pathParameters: acmeDeletion,
    });

    // Assess
    expect(setup.deletions[method]).toHaveBeenCalledExactlyOnceWith('acme', DELETION_ID);
    expect(setup.receipts.of).toHaveBeenCalledExactlyOnceWith(changed);
    expect(response.statusCode).toBe(status);
    expect(JSON.parse(response.body)).toMatchObject({ stream: 'clicks', attempts: 7 });
  });

  it.each(['retry', 'expedite'])(
    'gives the Location of the deletion a %s started',
    async (path) => {
      // Prepare
      const { respond } = api();

      // Act
      const response = await respond({
        method: 'POST',
        resource: `${DELETION}/${path}`,
        pathParameters: acmeDeletion,
      });

      // Assess
      expect(response.headers?.Location).toBe(`/v1/tenants/acme/deletions/${DELETION_ID}`);
    },
  );
});

describe.each<[string, ApiRequest, Record<string, unknown>]>([
  [
    'a new stream',
    { method: 'PUT', resource: STREAM, pathParameters: acmeLogs },
    { tenant: 'acme', stream: 'logs', generation: 1 },
  ],
  [
    'a stream being deleted',
    { method: 'GET', resource: STREAM, pathParameters: acmeLogs },
    { tenant: 'acme', stream: 'logs', generation: 2, deletionId: DELETION_ID },
  ],
  [
    'an ingest',
    { method: 'POST', resource: EVENTS, pathParameters: acmeLogs, body: '[1]' },
    { tenant: 'acme', stream: 'logs', generation: 1 },
  ],
  [
    'a deletion requested',
    { method: 'DELETE', resource: STREAM, pathParameters: acmeLogs },
    { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID, generation: 1 },
  ],
  [
    'a receipt',
    { method: 'GET', resource: DELETION, pathParameters: acmeDeletion },
    { tenant: 'acme', deletionId: DELETION_ID, stream: 'clicks', generation: 1 },
  ],
  [
    'a retry',
    { method: 'POST', resource: `${DELETION}/retry`, pathParameters: acmeDeletion },
    { tenant: 'acme', deletionId: DELETION_ID, stream: 'logs', generation: 1 },
  ],
  [
    'a refused name',
    { method: 'PUT', resource: STREAM, pathParameters: { tenant: 'acme', stream: 'Logs' } },
    { tenant: 'acme', stream: 'Logs' },
  ],
  ['health', { method: 'GET', resource: '/v1/health' }, {}],
])('the subject of %s', (_, request, subject) => {
  it('names what the request was about, for its log line', async () => {
    // Prepare
    const { handler, streams } = api();
    streams.get.mockResolvedValue(
      aStream({ state: 'DELETING', deletionId: DELETION_ID, generation: 2 }),
    );

    // Act
    const answer = await handler(apiEvent(request));

    // Assess
    expect(answer.subject).toEqual(subject);
  });
});
