import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  BadRequestError,
  LetheError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RouteNotFoundError,
} from '../errors.ts';
import type { EventWriter } from '../ingest.ts';
import { toReceipt, toStreamView } from '../model.ts';
import { assertValidName } from '../names.ts';
import type { StreamRegistry } from '../registry.ts';
import { type Operation, ROUTES } from './routes.ts';

export interface HttpApiOptions {
  readonly registry: StreamRegistry;
  readonly writer: EventWriter;
  /** Largest events body accepted, in bytes. */
  readonly maxEventsBytes: number;
  /** Told about every error that is not the caller's fault (each one is a bug to fix). */
  readonly onUnexpectedError?: (error: unknown, event: APIGatewayProxyEvent) => void;
}

export type HttpHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

interface Request {
  params: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  body: Buffer;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const DELETION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The api Lambda's behaviour: route by API Gateway resource, answer JSON, map errors once. */
export function createHttpApi({
  registry,
  writer,
  maxEventsBytes,
  onUnexpectedError,
}: HttpApiOptions): HttpHandler {
  const tenantOf = (request: Request) => assertValidName('tenant', request.params.tenant);
  const streamOf = (request: Request) => assertValidName('stream', request.params.stream);
  const deletionIdOf = (request: Request) => {
    const id = request.params.deletionId;
    if (!id || !DELETION_ID.test(id)) {
      throw new BadRequestError('InvalidDeletionId', 'deletionId must be a lowercase UUID');
    }
    return id;
  };
  const receipt = async (tenant: string, deletionId: string) => {
    const deletion = await registry.getDeletion(tenant, deletionId);
    return toReceipt(deletion, await registry.failures(deletion));
  };
  const accepted = (tenant: string, body: { deletionId: string }) => ({
    status: 202,
    body,
    headers: { Location: `/v1/tenants/${tenant}/deletions/${body.deletionId}` },
  });

  const operations: Record<Operation, (request: Request) => Promise<Reply>> = {
    health: async () => ({ status: 200, body: { status: 'ok' } }),

    listStreams: async (request) => {
      const tenant = tenantOf(request);
      const limit = parseLimit(request.query.limit);
      const page = await registry.list(tenant, limit, request.query.nextToken);
      return {
        status: 200,
        body: {
          streams: page.streams.map(toStreamView),
          ...(page.nextToken ? { nextToken: page.nextToken } : {}),
        },
      };
    },

    createStream: async (request) => {
      const { created, stream } = await registry.create(tenantOf(request), streamOf(request));
      return { status: created ? 201 : 200, body: toStreamView(stream) };
    },

    getStream: async (request) => ({
      status: 200,
      body: toStreamView(await registry.get(tenantOf(request), streamOf(request))),
    }),

    deleteStream: async (request) => {
      const tenant = tenantOf(request);
      const { deletion } = await registry.requestDeletion(tenant, streamOf(request));
      return accepted(tenant, toReceipt(deletion));
    },

    ingestEvents: async (request) => {
      const tenant = tenantOf(request);
      const name = streamOf(request);
      if (request.body.length > maxEventsBytes) {
        throw new PayloadTooLargeError(`events body is larger than ${maxEventsBytes} bytes`);
      }
      const events = parseEvents(request.body);
      const stream = await registry.admitIngest(tenant, name);
      let key: string;
      try {
        key = await writer.write(stream, events);
      } finally {
        await registry.releaseIngest(stream);
      }
      return { status: 201, body: { key, count: events.length } };
    },

    getDeletion: async (request) => {
      const tenant = tenantOf(request);
      return { status: 200, body: await receipt(tenant, deletionIdOf(request)) };
    },

    retryDeletion: async (request) => {
      const tenant = tenantOf(request);
      const deletion = await registry.retryDeletion(tenant, deletionIdOf(request));
      return accepted(tenant, toReceipt(deletion));
    },
  };

  return async (event) => {
    try {
      const operation = operationOf(event);
      const reply = await operations[operation]({
        params: event.pathParameters ?? {},
        query: event.queryStringParameters ?? {},
        body: bodyOf(event),
      });
      return json(reply.status, reply.body, reply.headers);
    } catch (error) {
      if (error instanceof LetheError) {
        return json(
          error.status,
          { error: { code: error.code, message: error.message } },
          error.headers,
        );
      }
      onUnexpectedError?.(error, event);
      return json(500, { error: { code: 'InternalError', message: 'unexpected error' } });
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
