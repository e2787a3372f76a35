import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { LetheError, MethodNotAllowedError, RouteNotFoundError } from '../core/index.ts';
import {
  type CertificateOperationsOptions,
  certificateOperations,
} from './certificate-operations.ts';
import { type DeletionOperationsOptions, deletionOperations } from './deletion-operations.ts';
import { type PartitionOperationsOptions, partitionOperations } from './partition-operations.ts';
import { type PlanOperationsOptions, planOperations } from './plan-operations.ts';
import type { Operations, Subject } from './request.ts';
import { type Operation, ROUTES } from './routes.ts';
import { type StreamOperationsOptions, streamOperations } from './stream-operations.ts';
import { type TenantOperationsOptions, tenantOperations } from './tenant-operations.ts';

export type HttpApiOptions = Omit<StreamOperationsOptions, 'streams'> &
  Omit<DeletionOperationsOptions, 'deletions'> &
  Omit<CertificateOperationsOptions, 'receipts'> &
  Omit<PlanOperationsOptions, 'streams'> &
  Omit<TenantOperationsOptions, 'streams' | 'defaultGraceSeconds'> & {
    readonly streams: StreamOperationsOptions['streams'] &
      PlanOperationsOptions['streams'] &
      PartitionOperationsOptions['streams'] &
      TenantOperationsOptions['streams'];
    readonly deletions: StreamOperationsOptions['deletions'] &
      DeletionOperationsOptions['deletions'] &
      PartitionOperationsOptions['deletions'];
    /** Told about every error that is not the caller's fault (each one is a bug to fix). */
    readonly onUnexpectedError?: (error: unknown, event: APIGatewayProxyEvent) => void;
  };

export interface HttpAnswer {
  response: APIGatewayProxyResult;
  subject: Subject;
}

export type HttpHandler = (event: APIGatewayProxyEvent) => Promise<HttpAnswer>;

/** The api Lambda's behaviour: route by API Gateway resource, answer JSON, map errors once. */
export function createHttpApi(options: HttpApiOptions): HttpHandler {
  const operations: Operations<Operation> = {
    health: async () => ({ status: 200, body: { status: 'ok' } }),
    ...streamOperations(options),
    ...deletionOperations(options),
    ...certificateOperations(options),
    ...planOperations(options),
    ...partitionOperations(options),
    ...tenantOperations(options),
  };

  return async (event) => {
    const params = event.pathParameters ?? {};
    const subject: Subject = {
      ...(params.tenant ? { tenant: params.tenant } : {}),
      ...(params.stream ? { stream: params.stream } : {}),
      ...(params.deletionId ? { deletionId: params.deletionId } : {}),
      ...(params.planId ? { planId: params.planId } : {}),
    };
    try {
      const reply = await operations[operationOf(event)]({
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
      options.onUnexpectedError?.(error, event);
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

function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}
