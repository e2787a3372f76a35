import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../lib/cli/args.ts';
import { EXIT_MEANINGS } from '../../../lib/cli/exit-codes.ts';
import { run } from '../../../lib/cli/main.ts';
import {
  apiError,
  cliDependencies,
  type FakeReply,
  fakeFetch,
  LOCAL,
  lethe,
} from '../../helpers/cli.ts';

describe.each<[string, FakeReply, number, string]>([
  [
    'a missing stream',
    apiError(404, 'StreamNotFound', 'stream acme/logs does not exist'),
    3,
    'lethe: StreamNotFound: stream acme/logs does not exist (HTTP 404)\n',
  ],
  [
    'a stream being deleted',
    {
      ...apiError(409, 'StreamDeleting', 'stream acme/logs is being deleted'),
      headers: { 'Retry-After': '5' },
    },
    4,
    'lethe: StreamDeleting: stream acme/logs is being deleted (HTTP 409)\n',
  ],
  [
    'a bad name the server refuses',
    apiError(400, 'InvalidName', 'tenant name must match'),
    7,
    'lethe: InvalidName: tenant name must match (HTTP 400)\n',
  ],
  [
    "API Gateway's own 403",
    {
      status: 403,
      body: { message: 'Missing Authentication Token' },
      headers: { 'x-amzn-ErrorType': 'MissingAuthenticationTokenException:http://internal' },
    },
    7,
    'lethe: MissingAuthenticationTokenException: Missing Authentication Token (HTTP 403)\n',
  ],
  [
    'a bug on the server',
    apiError(500, 'InternalError', 'unexpected error'),
    1,
    'lethe: InternalError: unexpected error (HTTP 500)\n',
  ],
  [
    'a body that is not JSON',
    { status: 502, body: 'Bad Gateway' },
    1,
    'lethe: HTTP502: Bad Gateway (HTTP 502)\n',
  ],
])('an answer for %s', (_, reply, exitCode, message) => {
  it(`exits ${exitCode} and prints the API's code and message`, async () => {
    // Act
    const result = await lethe(['streams', 'create', 'acme/logs'], () => reply);

    // Assess
    expect(result.code).toBe(exitCode);
    expect(result.stderr).toBe(message);
    expect(result.stdout).toBe('');
  });
});

describe('lethe', () => {
  it('exits 6 when nothing answers at the endpoint', async () => {
    // Prepare
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), {
        code: 'ECONNREFUSED',
      }),
    });
    const { deps, stderr } = cliDependencies({
      fetch: async () => {
        throw refused;
      },
    });

    // Act
    const code = await run(['streams', 'list', 'acme'], deps);

    // Assess
    expect(code).toBe(6);
    expect(stderr.text()).toBe('lethe: cannot reach http://127.0.0.1:3000: ECONNREFUSED\n');
  });

  it('exits 2 on a usage error and sends nothing', async () => {
    // Act
    const result = await lethe(['streams', 'get', 'Acme/logs'], () => ({ status: 200 }));

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
    expect(result.stderr).toBe(
      'lethe: tenant name must match ^[a-z0-9][a-z0-9_-]{0,62}$ (got "Acme")\nRun \'lethe --help\' for usage.\n',
    );
  });

  it('exits 2 when the events file cannot be read', async () => {
    // Prepare
    const { deps, stderr } = cliDependencies({
      readInput: async () => {
        throw new UsageError('cannot read missing.json: ENOENT');
      },
    });

    // Act
    const code = await run(['ingest', 'acme/logs', 'missing.json', ...LOCAL], deps);

    // Assess
    expect(code).toBe(2);
    expect(stderr.text()).toBe(
      "lethe: cannot read missing.json: ENOENT\nRun 'lethe --help' for usage.\n",
    );
  });

  it('prints help with every exit code', async () => {
    // Prepare
    const { deps, stdout } = cliDependencies();

    // Act
    const code = await run(['--help'], deps);

    // Assess
    expect(code).toBe(0);
    expect(EXIT_MEANINGS.map(([exit]) => exit)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    for (const [exit, meaning] of EXIT_MEANINGS)
      expect(stdout.text()).toContain(`  ${exit}  ${meaning}\n`);
  });

  it('documents the same exit codes in the README', () => {
    // Prepare
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d) +\| (.+?) +\|$/gm)].map((row) => [
      Number(row[1]),
      row[2],
    ]);

    // Assess
    expect(rows).toEqual(EXIT_MEANINGS.map(([exit, meaning]) => [exit, meaning]));
  });

  it('talks to the local stack when no endpoint is given and no stack is deployed', async () => {
    // Prepare
    const api = fakeFetch(() => ({ status: 200, body: { status: 'ok' } }));
    const { deps, stdout } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(['health'], deps);

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map((request) => request.url)).toEqual(['http://127.0.0.1:3000/v1/health']);
    expect(stdout.text()).toBe('ok http://127.0.0.1:3000\n');
  });
});
