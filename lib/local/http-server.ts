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
  // An HTTP/1.1 request without Host is refused in handle(), coded, where Node sent a bare 400.
  const server = createServer({ requireHostHeader: false }, (request, response) => {
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
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // Node's headersTimeout or requestTimeout: a client too slow to send its request.
      refuse(
        socket,
        '408 Request Timeout',
        'RequestTimeout',
        'the request was not received in time',
      );
    } else if (error.code === 'HPE_HEADER_OVERFLOW') {
      refuse(
        socket,
        '431 Request Header Fields Too Large',
        'HeadersTooLarge',
        'the request headers are too large',
      );
    } else {
      refuse(
        socket,
        '400 Bad Request',
        'MalformedRequest',
        'the request is not well-formed HTTP/1.1',
      );
    }
  });
  // CONNECT (a proxy's tunnel) and an Expect other than 100-continue: coded too, where Node
  // closed the connection without a word, or sent a bare 417.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    refuse(
      socket,
      '405 Method Not Allowed',
      'MethodNotAllowed',
      `${request.method} is not allowed here`,
    );
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    response.shouldKeepAlive = false;
    send(response, 417, {
      error: {
        code: 'ExpectationFailed',
        message: `Expect: ${request.headers.expect} is not supported`,
      },
    });
  });
  return server;

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const started = performance.now();
    const url = urlOf(request.url);
    if (request.httpVersion === '1.1' && request.headers.host === undefined) {
      send(response, 400, {
        error: { code: 'MalformedRequest', message: 'an HTTP/1.1 request must have a Host header' },
      });
      return;
    }
    if (!url) {
      send(response, 400, {
        error: { code: 'InvalidPath', message: 'the request target is not a path' },
      });
      return;
    }
    const path = pathAsSent(request.url ?? '/');
    if (onRequest) {
      response.once('finish', () => {
        const ms = Math.round(performance.now() - started);
        onRequest(`${request.method} ${path}${url.search} ${response.statusCode} ${ms}ms`);
      });
    }
    const body = await readBody(request);
    if (body === undefined) {
      send(response, 413, {
        error: { code: 'PayloadTooLarge', message: `body is larger than ${MAX_BODY_BYTES} bytes` },
      });
      return;
    }
    const match = matchPath(path, known);
    // Without a prototype: a name such as `__proto__` or `constructor` is a name like any other.
    const headers: Record<string, string> = Object.create(null);
    const multiValueHeaders: Record<string, string[]> = Object.create(null);
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined) continue;
      const values = Array.isArray(value) ? value : [value];
      headers[name] = values.join(',');
      multiValueHeaders[name] = values;
    }
    const query: Record<string, string> = Object.create(null);
    const multiQuery: Record<string, string[]> = Object.create(null);
    for (const [name, value] of url.searchParams) {
      query[name] = value;
      multiQuery[name] = [...(multiQuery[name] ?? []), value];
    }
    const method = request.method ?? 'GET';
    const event = {
      resource: match?.resource ?? path,
      path,
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
        path,
        resourcePath: match?.resource ?? path,
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

/**
 * The request's path as it was sent, up to its query. `new URL` resolves `.` and `..` segments
 * (`%2e` too) and reads `\` as `/`, so routing on its pathname would take
 * `/v1/tenants/acme/streams/junk/%2e%2e/logs` for `/v1/tenants/acme/streams/logs`; as sent, such a
 * segment is a name, and refused as one (400 InvalidName), or the path matches no route.
 */
function pathAsSent(target: string): string {
  const path = target.startsWith('/')
    ? target
    : target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return path.split(/[?#]/, 1)[0] || '/';
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

/** A coded answer written on the socket itself, then closed: its request cannot be read on. */
function refuse(socket: Duplex, status: string, code: string, message: string) {
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function send(response: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}
