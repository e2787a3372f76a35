import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/emulator.ts';
import { listAll } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

const STEPS = [
  'health',
  'create stream',
  'ingest',
  'plan',
  'schedule deletion',
  'cancel',
  'delete',
  'wait',
  'certificate',
  'clean up',
];

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `lethe smoke` as a child process, against `endpoint`. */
const smoke = (endpoint: string, args: string[] = []) =>
  new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/lethe.mjs', 'smoke', ...args], {
      cwd: ROOT,
      // Never ask an instance metadata service: there is none here.
      env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true', LETHE_ENDPOINT: endpoint },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** The steps printed, with their verdict: `ok health`, `FAIL certificate`. */
const verdicts = (stdout: string) =>
  [...stdout.matchAll(/^(ok {2}|FAIL) {2}(\S+(?: \S+)?) +\d+\.\ds {2}/gm)].map(
    ([, verdict, step]) => `${verdict?.trim()} ${step}`,
  );

/**
 * A proxy in front of the stack that answers `GET /v1/certificate-key` with another public key
 * under the same keyId: a deployment whose published key does not match its signer.
 */
async function wrongKeyProxy(target: string): Promise<Server> {
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const answer = await fetch(`${target}${request.url}`, {
      method: request.method ?? 'GET',
      headers: { 'content-type': request.headers['content-type'] ?? 'application/json' },
      ...(body.length > 0 ? { body } : {}),
    });
    let text = await answer.text();
    if (request.url?.startsWith('/v1/certificate-key') && answer.ok) {
      const key = JSON.parse(text) as { publicKeyPem: string };
      key.publicKeyPem = other.export({ format: 'pem', type: 'spki' }).toString();
      text = JSON.stringify(key);
    }
    response.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('lethe smoke against a local stack', () => {
  let target: TestTarget;
  let proxy: Server | undefined;

  beforeAll(async () => {
    target = await startTarget();
  });

  afterAll(async () => {
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await target?.stop();
  });

  it('runs every step, exits 0, and leaves no object of its tenant', async () => {
    // Act
    const result = await smoke(target.baseUrl);

    // Assess
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(verdicts(result.stdout)).toEqual(STEPS.map((step) => `ok ${step}`));
    expect(result.stdout).toContain('COMPLETED: 3 objects, 3 versions');
    expect(result.stdout).toContain('CANCELLED, nothing deleted');
    expect(result.stdout).toMatch(/^ok {4}certificate +\d+\.\ds {2}valid: 3 objects of /m);
    expect(result.stdout).toMatch(/^smoke test passed: 10 steps in \d+\.\ds$/m);
    const [, bucket = '', prefix = ''] =
      /stored under s3:\/\/([^/]+)\/(\S+)\n/.exec(result.stdout) ?? [];
    expect(prefix).toMatch(/\/smoke-\d{8}-\d{6}-[0-9a-f]{6}\/events-[0-9a-f]{6}\/1\/$/);
    expect([...(await listAll(target.s3, bucket, prefix)).keys()]).toEqual([]);
  });

  // The proxy forwards unsigned: against a deployed API (LETHE_TEST_API_URL) it would be refused.
  it.skipIf(Boolean(process.env.LETHE_TEST_API_URL))(
    'fails at the certificate when the published key is not the signer',
    async () => {
      // Prepare
      proxy = await wrongKeyProxy(target.baseUrl);
      const { port } = proxy.address() as AddressInfo;

      // Act
      const result = await smoke(`http://127.0.0.1:${port}`);

      // Assess
      expect(result.code).toBe(10);
      expect(verdicts(result.stdout)).toEqual([
        ...STEPS.slice(0, 8).map((step) => `ok ${step}`),
        'FAIL certificate',
      ]);
      expect(result.stderr).toMatch(
        /^lethe: smoke test failed at step certificate: the certificate of deletion \S+ does not verify against the key the API publishes for /,
      );
      expect(result.stderr).toContain('left behind: no stream data\n');
    },
  );

  it('fails at the health check when the endpoint refuses, and leaves nothing', async () => {
    // Prepare: a port nothing listens on.
    const port = await freePort();

    // Act
    const result = await smoke(`http://127.0.0.1:${port}`);

    // Assess
    expect(result.code).toBe(6);
    expect(verdicts(result.stdout)).toEqual(['FAIL health']);
    expect(result.stderr).toContain(
      `lethe: smoke test failed at step health: cannot reach http://127.0.0.1:${port}`,
    );
    expect(result.stderr).toContain('left behind: no stream data\n');
  });
});
