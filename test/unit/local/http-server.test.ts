import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHttpServer } from '../../../lib/local/http-server.ts';

/** Sends a raw HTTP/1.1 request (any target, as a hostile client would) and reads the status. */
function rawRequest(port: number, target: string, body = '') {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('end', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
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

  it('refuses a request target that is not a path with a coded 400', async () => {
    const { port, invoke } = await serve();

    const status = await rawRequest(port, 'http://[::1');

    expect(status).toBe('HTTP/1.1 400 Bad Request');
    expect(invoke).not.toHaveBeenCalled();
  });
});
