import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpServer } from '../../../lib/local/http-server.ts';

/** Sends raw bytes and reads the whole answer, up to the server's closing the connection. */
function rawExchange(port: number, bytes: string) {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Sends a raw HTTP/1.1 request (any target, as a hostile client would) and reads the status. */
async function rawRequest(port: number, target: string, body = '') {
  const answer = await rawExchange(
    port,
    `GET ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  return answer.split('\r\n')[0] ?? '';
}

describe('the local HTTP server', () => {
  const servers: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  async function serve() {
    const invoke = vi.fn(async () => ({
      statusCode: 404,
      body: '{"error":{"code":"RouteNotFound"}}',
    }));
    const server = createHttpServer({ resources: ['/v1/health'], invoke });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return { port: (server.address() as AddressInfo).port, invoke };
  }

  it('takes a path that starts with // as a path (it once answered 500), with a large body', async () => {
    // Arrange
    const { port, invoke } = await serve();

    // Act: what the hostile-input soak found, seed 20261129
    const status = await rawRequest(port, '//%20%20?limit=0', 'x'.repeat(3_000_000));

    // Assess
    expect(status).toBe('HTTP/1.1 404 Not Found');
    expect(invoke).toHaveBeenCalledWith(expect.objectContaining({ path: '//%20%20' }));
  });

  it.each([
    ['/v1/tenants/acme/streams/%2e%2e', { tenant: 'acme', stream: '..' }],
    ['/v1/tenants/acme/streams/..', { tenant: 'acme', stream: '..' }],
    ['/v1/tenants/acme/streams/%2E', { tenant: 'acme', stream: '.' }],
    ['/v1/tenants/acme/streams/logs%5C..', { tenant: 'acme', stream: 'logs\\..' }],
  ])(
    'routes %s as sent: the dot segment is a name (the api refuses it), not a step back',
    async (target, pathParameters) => {
      // Arrange
      const invoke = vi.fn(async () => ({ statusCode: 400, body: '{}' }));
      const server = createHttpServer({
        resources: ['/v1/tenants/{tenant}', '/v1/tenants/{tenant}/streams/{stream}'],
        invoke,
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

      // Act
      await rawRequest((server.address() as AddressInfo).port, target);

      // Assess
      expect(invoke).toHaveBeenCalledWith(
        expect.objectContaining({
          resource: '/v1/tenants/{tenant}/streams/{stream}',
          path: target,
          pathParameters,
        }),
      );
    },
  );

  it('matches no route for a path that reaches one only once its dot segments are resolved', async () => {
    // Arrange: /v1/tenants/acme/streams/junk/../logs resolved is DELETE of acme/logs
    const invoke = vi.fn(async () => ({ statusCode: 404, body: '{}' }));
    const server = createHttpServer({
      resources: ['/v1/tenants/{tenant}/streams/{stream}'],
      invoke,
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const target = '/v1/tenants/acme/streams/junk/%2e%2e/logs?x=1';

    // Act
    await rawExchange(
      (server.address() as AddressInfo).port,
      `DELETE ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );

    // Assess: the api sees the path as sent, with no route matched (it answers 404)
    expect(invoke).toHaveBeenCalledWith(
      expect.objectContaining({
        resource: '/v1/tenants/acme/streams/junk/%2e%2e/logs',
        path: '/v1/tenants/acme/streams/junk/%2e%2e/logs',
        pathParameters: null,
        queryStringParameters: { x: '1' },
      }),
    );
  });

  it('refuses a request target that is not a path with a coded 400', async () => {
    const { port, invoke } = await serve();

    const status = await rawRequest(port, 'http://[::1');

    expect(status).toBe('HTTP/1.1 400 Bad Request');
    expect(invoke).not.toHaveBeenCalled();
  });

  // Node itself drops a header named __proto__ (its headers object has a prototype).
  it.each([
    ['__proto__', undefined],
    ['constructor', 'z'],
    ['toString', 'z'],
  ])(
    'passes a query parameter and a header named %s on as any other (it answered 500)',
    async (name, header) => {
      const { port, invoke } = await serve();

      const answer = await rawExchange(
        port,
        `GET /v1/health?${name}=x&${name}=y HTTP/1.1\r\nHost: x\r\n${name}: z\r\nConnection: close\r\n\r\n`,
      );

      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
      const [event] = invoke.mock.calls[0] as unknown as [APIGatewayProxyEvent];
      expect(event.queryStringParameters?.[name]).toBe('y');
      expect(event.multiValueQueryStringParameters?.[name]).toEqual(['x', 'y']);
      expect(event.headers[name.toLowerCase()]).toBe(header);
    },
  );

  it.each([
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 'MalformedRequest', '400 Bad Request'],
    [
      'a Content-Length that is not a number',
      'POST /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n',
      'MalformedRequest',
      '400 Bad Request',
    ],
    [
      'an HTTP/1.1 request without Host',
      'GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n',
      'MalformedRequest',
      '400 Bad Request',
    ],
    [
      'an Expect it cannot meet',
      'POST /v1/health HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nContent-Length: 2\r\n\r\n[]',
      'ExpectationFailed',
      '417 Expectation Failed',
    ],
    [
      'CONNECT',
      'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n',
      'MethodNotAllowed',
      '405 Method Not Allowed',
    ],
    [
      'headers larger than Node reads',
      `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'HeadersTooLarge',
      '431 Request Header Fields Too Large',
    ],
  ])(
    'answers %s with a coded JSON error, as every other refusal (Node sent a bare 400, or 417, or nothing)',
    async (_, bytes, code, status) => {
      const { port, invoke } = await serve();

      const answer = await rawExchange(port, bytes);

      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head.split('\r\n')[0]).toBe(`HTTP/1.1 ${status}`);
      expect(head).toContain('Content-Type: application/json');
      expect(JSON.parse(body)).toEqual({ error: { code, message: expect.any(String) } });
      expect(invoke).not.toHaveBeenCalled();
    },
  );

  it('answers a request Node timed out (headersTimeout, requestTimeout) 408 RequestTimeout, not 400', async () => {
    // Prepare: Node checks its timeouts every 30 s, so the test hands the server the error
    // Node raises then, on a socket of its own.
    const server = createHttpServer({ resources: ['/v1/health'], invoke: vi.fn() });
    const socket = new PassThrough();
    const timeout = Object.assign(new Error('Request timeout'), {
      code: 'ERR_HTTP_REQUEST_TIMEOUT',
    });

    // Act
    server.emit('clientError', timeout, socket);

    // Assess
    const [head = '', body = ''] = String(socket.read()).split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(head).toContain('Connection: close');
    expect(JSON.parse(body)).toEqual({
      error: { code: 'RequestTimeout', message: 'the request was not received in time' },
    });
  });
});
