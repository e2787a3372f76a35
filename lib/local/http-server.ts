import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { matchPath } from '../api/routes.ts';

/** API Gateway's own payload limit. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

export interface HttpServerOptions {
  /** Resource templates the REST API declares, from the synthesized template. */
  readonly resources: Iterable<string>;
  readonly invoke: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
  readonly log?: (message: string) => void;
  /** Told of every request once answered, as a dev server's console line. */
  readonly onRequest?: (line: string) => void;
}

/**
 * Serves the REST API on loopback: each request becomes an API Gateway proxy event for the
 * api handler, matched against the resources the stack declares (no auth locally).
 */
export function createHttpServer({ resources, invoke, log, onRequest }: HttpServerOptions): Server {
  const known = [...resources];
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log?.(`http: ${(error as Error).message}`);
      if (!response.headersSent) {
        send(response, 500, { error: { code: 'InternalError', message: 'unexpected error' } });
      } else {
        response.end();
      }
    });
  });
  // What Node's parser refuses (a malformed request line, header or length) gets a coded
  // answer too, where Node's default is a bare 400; the connection cannot be read on, so closes.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({
      error: tooLarge
        ? { code: 'HeadersTooLarge', message: 'the request headers are too large' }
        : { code: 'MalformedRequest', message: 'the request is not well-formed HTTP/1.1' },
    });
    socket.end(
      `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  });
  return server;

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const started = performance.now();
    const url = urlOf(request.url);
    if (!url) {
      send(response, 400, {
        error: { code: 'InvalidPath', message: 'the request target is not a path' },
      });
      return;
    }
    if (onRequest) {
      response.once('finish', () => {
        const ms = Math.round(performance.now() - started);
        onRequest(`${request.method} ${url.pathname}${url.search} ${response.statusCode} ${ms}ms`);
      });
    }
    const body = await readBody(request);
    if (body === undefined) {
      send(response, 413, {
        error: { code: 'PayloadTooLarge', message: `body is larger than ${MAX_BODY_BYTES} bytes` },
      });
      return;
    }
    const match = matchPath(url.pathname, known);
    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined) continue;
      const values = Array.isArray(value) ? value : [value];
      headers[name] = values.join(',');
      multiValueHeaders[name] = values;
    }
    const query: Record<string, string> = {};
    const multiQuery: Record<string, string[]> = {};
    for (const [name, value] of url.searchParams) {
      query[name] = value;
      multiQuery[name] = [...(multiQuery[name] ?? []), value];
    }
    const method = request.method ?? 'GET';
    const event = {
      resource: match?.resource ?? url.pathname,
      path: url.pathname,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: url.searchParams.size > 0 ? query : null,
      multiValueQueryStringParameters: url.searchParams.size > 0 ? multiQuery : null,
      pathParameters: match?.pathParameters ?? null,
      stageVariables: null,
      // As the deployed API passes every body (binary media types */*): the bytes, exactly.
      body: body.length > 0 ? body.toString('base64') : null,
      isBase64Encoded: body.length > 0,
      requestContext: {
        requestId: randomUUID(),
        httpMethod: method,
        path: url.pathname,
        resourcePath: match?.resource ?? url.pathname,
        stage: 'local',
        requestTimeEpoch: Date.now(),
      },
    } as unknown as APIGatewayProxyEvent;
    const result = await invoke(event);
    response.writeHead(result.statusCode, {
      ...(result.headers as Record<string, string>),
    });
    response.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
  }
}

/**
 * The request's path and query. A path is taken as a path even when it starts with `//` (which
 * `new URL(path, base)` would read as a host); anything that is not a path is refused.
 */
function urlOf(target: string | undefined): URL | undefined {
  const path = target ?? '/';
  try {
    return path.startsWith('/') ? new URL(`http://localhost${path}`) : new URL(path);
  } catch {
    return undefined;
  }
}

function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}
