import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  assertValidName,
  BadRequestError,
  isDeletionId,
  LetheError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RouteNotFoundError,
  toReceipt,
  toStreamView,
} from '../core/index.ts';
import type { EventWriter } from '../s3/index.ts';
import type { DeletionStore, StreamStore } from '../store/index.ts';
import type { Receipts } from './receipts.ts';
import { type Operation, ROUTES } from './routes.ts';

export interface HttpApiOptions {
  readonly streams: Pick<StreamStore, 'create' | 'get' | 'list' | 'admitIngest' | 'releaseIngest'>;
  readonly deletions: Pick<DeletionStore, 'request' | 'retry'>;
  readonly receipts: Pick<Receipts, 'get' | 'of'>;
  readonly writer: Pick<EventWriter, 'write'>;
  /** Largest events body accepted, in bytes. */
  readonly maxEventsBytes: number;
  /** Told about every error that is not the caller's fault (each one is a bug to fix). */
  readonly onUnexpectedError?: (error: unknown, event: APIGatewayProxyEvent) => void;
}

/** What a request was about, as far as its path and answer tell: for the request's log line. */
export interface Subject {
  tenant?: string;
  stream?: string;
  deletionId?: string;
  generation?: number;
}

export interface HttpAnswer {
  response: APIGatewayProxyResult;
  subject: Subject;
}

export type HttpHandler = (event: APIGatewayProxyEvent) => Promise<HttpAnswer>;

interface Request {
  params: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  body: Buffer;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** What the answer is about, beyond the path (a new deletion's id, a generation). */
  subject?: Subject;
}

/** The api Lambda's behaviour: route by API Gateway resource, answer JSON, map errors once. */
export function createHttpApi({
  streams,
  deletions,
  receipts,
  writer,
  maxEventsBytes,
  onUnexpectedError,
}: HttpApiOptions): HttpHandler {
  const tenantOf = (request: Request) => assertValidName('tenant', request.params.tenant);
  const streamOf = (request: Request) => assertValidName('stream', request.params.stream);
  const deletionIdOf = (request: Request) => {
    const id = request.params.deletionId;
    if (!isDeletionId(id)) {
      throw new BadRequestError('InvalidDeletionId', 'deletionId must be a lowercase UUID');
    }
    return id;
  };
  const accepted = (
    tenant: string,
    body: { deletionId: string; stream: string; generation: number },
  ): Reply => ({
    status: 202,
    body,
    headers: { Location: `/v1/tenants/${tenant}/deletions/${body.deletionId}` },
    subject: { deletionId: body.deletionId, stream: body.stream, generation: body.generation },
  });
  const stream = (status: number, record: Parameters<typeof toStreamView>[0]): Reply => ({
    status,
    body: toStreamView(record),
    subject: {
      generation: record.generation,
      ...(record.deletionId ? { deletionId: record.deletionId } : {}),
    },
  });

  const operations: Record<Operation, (request: Request) => Promise<Reply>> = {
    health: async () => ({ status: 200, body: { status: 'ok' } }),

    listStreams: async (request) => {
      const tenant = tenantOf(request);
      const limit = parseLimit(request.query.limit);
      const page = await streams.list(tenant, limit, request.query.nextToken);
      return {
        status: 200,
        body: {
          streams: page.streams.map(toStreamView),
          ...(page.nextToken ? { nextToken: page.nextToken } : {}),
        },
      };
    },

    createStream: async (request) => {
      const created = await streams.create(tenantOf(request), streamOf(request));
      return stream(created.created ? 201 : 200, created.stream);
    },

    getStream: async (request) =>
      stream(200, await streams.get(tenantOf(request), streamOf(request))),

    deleteStream: async (request) => {
      const tenant = tenantOf(request);
      const { deletion } = await deletions.request(tenant, streamOf(request));
      return accepted(tenant, toReceipt(deletion));
    },

    ingestEvents: async (request) => {
      const tenant = tenantOf(request);
      const name = streamOf(request);
      if (request.body.length > maxEventsBytes) {
        throw new PayloadTooLargeError(`events body is larger than ${maxEventsBytes} bytes`);
      }
      const events = parseEvents(request.body);
      const admitted = await streams.admitIngest(tenant, name);
      let key: string;
      try {
        key = await writer.write(admitted, events);
      } finally {
        await streams.releaseIngest(admitted);
      }
      return {
        status: 201,
        body: { key, count: events.length },
        subject: { generation: admitted.generation },
      };
    },

    getDeletion: async (request) => {
      const tenant = tenantOf(request);
      const receipt = await receipts.get(tenant, deletionIdOf(request));
      return {
        status: 200,
        body: receipt,
        subject: { stream: receipt.stream, generation: receipt.generation },
      };
    },

    retryDeletion: async (request) => {
      const tenant = tenantOf(request);
      const deletion = await deletions.retry(tenant, deletionIdOf(request));
      return accepted(tenant, await receipts.of(deletion));
    },
  };

  return async (event) => {
    const params = event.pathParameters ?? {};
    const subject: Subject = {
      ...(params.tenant ? { tenant: params.tenant } : {}),
      ...(params.stream ? { stream: params.stream } : {}),
      ...(params.deletionId ? { deletionId: params.deletionId } : {}),
    };
    try {
      const operation = operationOf(event);
      const reply = await operations[operation]({
        params,
        query: event.queryStringParameters ?? {},
        body: bodyOf(event),
      });
      return {
        response: json(reply.status, reply.body, reply.headers),
        subject: { ...subject, ...reply.subject },
      };
    } catch (error) {
      if (error instanceof LetheError) {
        const body = { error: { code: error.code, message: error.message } };
        return { response: json(error.status, body, error.headers), subject };
      }
      onUnexpectedError?.(error, event);
      const body = { error: { code: 'InternalError', message: 'unexpected error' } };
      return { response: json(500, body), subject };
    }
  };
}

function operationOf(event: APIGatewayProxyEvent): Operation {
  const routes = ROUTES.filter((route) => route.resource === event.resource);
  if (routes.length === 0) throw new RouteNotFoundError(`no route for ${event.path}`);
  const route = routes.find((candidate) => candidate.method === event.httpMethod);
  if (!route) {
    throw new MethodNotAllowedError(
      event.httpMethod,
      routes.map((candidate) => candidate.method),
    );
  }
  return route.operation;
}

function bodyOf(event: APIGatewayProxyEvent): Buffer {
  if (event.body === null || event.body === undefined) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}

function parseEvents(body: Buffer): unknown[] {
  let events: unknown;
  try {
    events = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequestError('InvalidJson', 'the body is not valid JSON');
  }
  if (!Array.isArray(events)) {
    throw new BadRequestError('NotAnArray', 'the body must be a JSON array of events');
  }
  if (events.length === 0) {
    throw new BadRequestError('EmptyBatch', 'the array of events is empty');
  }
  return events;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 50;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 100) {
    throw new BadRequestError('InvalidLimit', 'limit must be an integer from 1 to 100');
  }
  return limit;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}
