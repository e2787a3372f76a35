import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LONG_OPTIONS, UsageError } from '../../../lib/cli/args.ts';
import { EXIT_MEANINGS } from '../../../lib/cli/exit-codes.ts';
import { COMMANDS } from '../../../lib/cli/help.ts';
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

describe('an endpoint that answers, but is not Lethe', () => {
  const PAGE = '<html><body><h1>Sign in to the guest network</h1></body></html>';
  const page = (): FakeReply => ({
    status: 200,
    body: PAGE,
    headers: { 'content-type': 'text/html' },
  });

  it.each([
    ['health', ['health']],
    ['an ingest', ['ingest', 'acme/logs', '-']],
    ['a stream read', ['streams', 'get', 'acme/logs']],
    ['a list', ['streams', 'list', 'acme']],
  ])('%s exits 6, saying what answered, instead of printing undefined', async (_, argv) => {
    // Prepare
    const { deps, stdout, stderr } = cliDependencies({
      fetch: fakeFetch(page).fetch,
      readInput: async () => new TextEncoder().encode('[{"n":1}]'),
    });

    // Act
    const code = await run([...argv, ...LOCAL], deps);

    // Assess
    expect(code).toBe(6);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toBe(
      [
        `lethe: the endpoint answered HTTP 200 with text/html: ${PAGE}, not Lethe's JSON: is it Lethe's API?`,
        'the endpoint came from --endpoint',
        'hint: start the local stack with `npm start`, or check --endpoint',
        '',
      ].join('\n'),
    );
  });

  it("exits 6 for JSON that is not Lethe's: a health without status, a deletion without state", async () => {
    // Act: --wait would otherwise poll a state that never comes
    const health = await lethe(['health'], () => ({ status: 200, body: { hello: 'world' } }));
    const wait = await lethe(['delete', 'acme/logs', '--wait'], () => ({
      status: 202,
      body: { accepted: true },
    }));

    // Assess
    expect(health.code).toBe(6);
    expect(health.stderr).toContain(
      `lethe: http://127.0.0.1:3000/v1/health answered {"hello":"world"}, not Lethe's {"status":"ok"}: is it Lethe's API?`,
    );
    expect(wait.code).toBe(6);
    expect(wait.stderr).toContain(
      `lethe: the answer has no state, so it is not Lethe's: {"accepted":true}`,
    );
  });

  it.each<[string, string[], unknown, string]>([
    ['streams get', ['streams', 'get', 'acme/logs'], {}, 'the answer has no state'],
    ['streams list', ['streams', 'list', 'acme'], {}, 'the answer has no streams list'],
    [
      'deletions list',
      ['deletions', 'list', 'acme'],
      { deletions: [null] },
      'the answer has an item that is not an object',
    ],
    ['tenants get', ['tenants', 'get', 'acme'], { state: 'RUNNING' }, 'the answer has no tenant'],
    ['certificate-key', ['certificate-key'], {}, 'the answer has no keyId'],
    ['delete --dry-run', ['delete', 'acme/logs', '--dry-run'], {}, 'the answer has no state'],
    [
      'delete --wait',
      ['delete', 'acme/logs', '--wait'],
      { state: 'WEIRD' },
      'the answer has a state of "WEIRD"',
    ],
  ])(
    "exits 6 for a %s answer that is not Lethe's (it printed undefined, crashed or waited for ever)",
    async (_, args, body, message) => {
      const result = await lethe(args, () => ({ status: 200, body }));

      expect(result.code).toBe(6);
      expect(result.stderr).toContain(`lethe: ${message}`);
      expect(result.stdout).not.toContain('undefined');
    },
  );

  it.each([
    [
      'an HTML 404 page',
      {
        status: 404,
        body: '<html><body><h1>Not Found</h1></body></html>',
        headers: { 'content-type': 'text/html' },
      },
      "answered HTTP 404 with text/html: Not Found, not Lethe's JSON: is it Lethe's API?",
    ],
    [
      'a plain-text 405',
      { status: 405, body: 'Method Not Allowed', headers: { 'content-type': 'text/plain' } },
      "answered HTTP 405 with text/plain: Method Not Allowed, not Lethe's JSON: is it Lethe's API?",
    ],
    [
      'an empty 404',
      { status: 404, body: '' },
      "and no body, not Lethe's JSON: is it Lethe's API?",
    ],
    [
      "another API's JSON 404",
      { status: 404, body: { detail: 'Not Found' } },
      'answered HTTP 404 with application/json: {"detail":"Not Found"}, not Lethe\'s JSON',
    ],
  ])(
    "exits 6 for %s, another server's error and not Lethe's (it exited 3, no such stream)",
    async (_, reply, message) => {
      // Act
      const result = await lethe(['streams', 'get', 'acme/logs'], () => reply);

      // Assess
      expect(result.code).toBe(6);
      expect(result.stderr).toContain(message);
    },
  );

  it("shows an error page's words, not its HTML", async () => {
    // Act
    const result = await lethe(['health'], () => ({
      status: 502,
      body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
      headers: { 'content-type': 'text/html' },
    }));

    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "lethe: HTTP502: 502 Bad Gateway (an HTML page, not Lethe's JSON) (HTTP 502)\n",
    );
  });

  it('hints at an endpoint that ends in /v1 when no route answers', async () => {
    // Prepare
    const { deps, stderr } = cliDependencies({
      env: { LETHE_ENDPOINT: 'http://127.0.0.1:3000/v1' },
      fetch: fakeFetch(() => ({
        status: 404,
        body: { error: { code: 'RouteNotFound', message: 'no route for /v1/v1/health' } },
      })).fetch,
    });

    // Act
    const code = await run(['health'], deps);

    // Assess
    expect(code).toBe(3);
    expect(stderr.text()).toBe(
      [
        'lethe: RouteNotFound: no route for /v1/v1/health (HTTP 404)',
        'hint: the endpoint ends in /v1, which every request adds itself: try http://127.0.0.1:3000',
        '',
      ].join('\n'),
    );
  });
});

describe('run, deployed behind API Gateway', () => {
  it('hints at an endpoint that ends in /v1 when API Gateway finds no route (its 403)', async () => {
    // Prepare: API Gateway answers an unknown path as a missing token, in Lethe's error shape
    const { deps, stderr } = cliDependencies({
      env: { LETHE_ENDPOINT: 'https://abc.execute-api.us-east-1.amazonaws.com/prod/v1' },
      fetch: fakeFetch(() => ({
        status: 403,
        body: {
          error: { code: 'MISSING_AUTHENTICATION_TOKEN', message: 'Missing Authentication Token' },
        },
      })).fetch,
      credentials: () => async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
    });

    // Act
    const code = await run(['health'], deps);

    // Assess
    expect(code).toBe(7);
    expect(stderr.text()).toContain(
      'hint: the endpoint ends in /v1, which every request adds itself: try https://abc.execute-api.us-east-1.amazonaws.com/prod\n',
    );
  });
});

const refused = Object.assign(new TypeError('fetch failed'), {
  cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
});
const refusing = async (): Promise<Response> => {
  throw refused;
};

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
    expect(stderr.text()).toBe(
      [
        'lethe: cannot reach http://127.0.0.1:3000: ECONNREFUSED',
        'the endpoint is the local default: no --endpoint, no LETHE_ENDPOINT, and no ApiUrl from stack Lethe (no stack in unit tests)',
        'hint: start the local stack with `npm start`, or set LETHE_ENDPOINT',
        '',
      ].join('\n'),
    );
  });

  it.each<[string, string[], Record<string, string>, string]>([
    [
      '--endpoint',
      ['--endpoint', 'http://127.0.0.1:4000'],
      { LETHE_ENDPOINT: 'http://127.0.0.1:5000' },
      'the endpoint came from --endpoint\nhint: start the local stack with `npm start`, or check --endpoint',
    ],
    [
      'LETHE_ENDPOINT',
      [],
      { LETHE_ENDPOINT: 'http://127.0.0.1:4000' },
      'the endpoint came from LETHE_ENDPOINT\nhint: start the local stack with `npm start`, or check LETHE_ENDPOINT',
    ],
  ])('says the endpoint that did not answer came from %s', async (_, args, env, said) => {
    // Prepare
    const { deps, stderr } = cliDependencies({ env, fetch: refusing });

    // Act
    const code = await run(['health', ...args], deps);

    // Assess
    expect(code).toBe(6);
    expect(stderr.text()).toBe(
      `lethe: cannot reach http://127.0.0.1:4000: ECONNREFUSED\n${said}\n`,
    );
  });

  it('says the endpoint that did not answer came from a stack', async () => {
    // Prepare
    const lookupStack = () => async () => ({
      url: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
    });
    const { deps, stderr } = cliDependencies({
      fetch: refusing,
      lookupStack,
      credentials: () => async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    });

    // Act
    const code = await run(['health', '--stack', 'LetheStaging'], deps);

    // Assess
    expect(code).toBe(6);
    expect(stderr.text()).toBe(
      [
        'lethe: cannot reach https://abc.execute-api.eu-west-1.amazonaws.com/prod: ECONNREFUSED',
        'the endpoint came from the ApiUrl output of stack LetheStaging',
        'hint: check that stack LetheStaging is deployed, or set LETHE_ENDPOINT',
        '',
      ].join('\n'),
    );
  });

  it.each<[string, string[], Record<string, string>]>([
    ['--endpoint 127.0.0.1:3000', ['--endpoint', '127.0.0.1:3000'], {}],
    ['LETHE_ENDPOINT=localhost', [], { LETHE_ENDPOINT: 'ftp://localhost' }],
  ])('exits 2 for a malformed endpoint (%s) and sends nothing', async (_, args, env) => {
    // Prepare
    const api = fakeFetch(() => ({ status: 200, body: { status: 'ok' } }));
    const { deps, stderr } = cliDependencies({ env, fetch: api.fetch });

    // Act
    const code = await run(['health', ...args], deps);

    // Assess
    expect(code).toBe(2);
    expect(api.sent).toEqual([]);
    expect(stderr.text()).toMatch(
      /^lethe: (--endpoint|LETHE_ENDPOINT) (is not a URL|must be an http or https URL): /,
    );
  });

  it('exits 2 on a usage error and sends nothing', async () => {
    // Act
    const result = await lethe(['streams', 'get', 'Acme/logs'], () => ({ status: 200 }));

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
    expect(result.stderr).toBe(
      'lethe: tenant name must be lowercase letters, digits, - and _, 1 to 63 characters, starting with a letter or digit (got "Acme": "A" is not allowed)\nRun \'lethe --help\' for usage.\n',
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
    expect(EXIT_MEANINGS.map(([exit]) => exit)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 130,
    ]);
    for (const [exit, meaning] of EXIT_MEANINGS)
      expect(stdout.text()).toContain(`  ${exit}  ${meaning}\n`);
  });

  it('documents exit codes in the README with the same words', () => {
    // Prepare: docs/cli.md lists them all too (docs.test.ts).
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d+) +\| (.+?) +\|$/gm)].map((row) => [
      Number(row[1]),
      row[2],
    ]);
    const meanings = new Map<number, string>(EXIT_MEANINGS);

    // Assess: every code, each in the same words
    expect(rows.map(([exit]) => exit)).toEqual(EXIT_MEANINGS.map(([exit]) => exit));
    for (const [exit, meaning] of rows) expect(meaning).toBe(meanings.get(Number(exit)));
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

describe('help', () => {
  it('lethe --help lists every command and every option', async () => {
    // Prepare
    const { deps, stdout } = cliDependencies();

    // Act
    const code = await run(['--help'], deps);

    // Assess
    expect(code).toBe(0);
    for (const { usage, summary } of COMMANDS) {
      expect(stdout.text()).toContain(`  lethe ${usage}`);
      expect(stdout.text()).toContain(summary);
    }
    for (const option of LONG_OPTIONS)
      expect(stdout.text()).toMatch(new RegExp(`^  (-h, )?${option}\\b`, 'm'));
  });

  it('promises no ETA: receipts carry no total', async () => {
    // Prepare
    const { deps, stdout } = cliDependencies();

    // Act
    await run(['help'], deps);

    // Assess
    expect(stdout.text()).not.toMatch(/ETA/);
  });

  it.each(['streams', 'deletions', 'plans', 'partitions', 'tenants'])(
    'lethe help %s lists that group and exits 0',
    async (group) => {
      // Prepare
      const { deps, stdout, stderr } = cliDependencies();

      // Act
      const code = await run(['help', group], deps);

      // Assess
      expect(code).toBe(0);
      expect(stderr.text()).toBe('');
      const lines = stdout
        .text()
        .split('\n')
        .filter((line) => line.startsWith('  lethe '));
      expect(lines.length).toBe(
        COMMANDS.filter(({ usage }) => usage.startsWith(`${group} `)).length,
      );
      expect(lines.every((line) => line.startsWith(`  lethe ${group} `))).toBe(true);
    },
  );

  it.each([[['help', 'delete']], [['delete', 'acme/logs', '--help']]])(
    'lethe %j shows the forms of that command, and exits 0',
    async (argv) => {
      // Prepare
      const { deps, stdout } = cliDependencies();

      // Act
      const code = await run(argv, deps);

      // Assess
      expect(code).toBe(0);
      expect(stdout.text()).toBe(
        [
          '  lethe delete TENANT/STREAM [--grace DURATION] [--wait]',
          '                                          the same as streams delete',
          '  lethe delete TENANT/STREAM --dry-run    the same as streams delete --dry-run',
          '',
          "Run 'lethe --help' for every option, the endpoint and the exit codes.",
          '',
        ].join('\n'),
      );
    },
  );

  it('a bare lethe deletions lists its subcommands on stderr and exits 2', async () => {
    // Prepare
    const { deps, stdout, stderr } = cliDependencies();

    // Act
    const code = await run(['deletions'], deps);

    // Assess
    expect(code).toBe(2);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toMatch(
      /^lethe: deletions needs a subcommand:\n {2}lethe deletions list /,
    );
    for (const verb of ['list', 'get', 'cancel', 'expedite', 'retry']) {
      expect(stderr.text()).toContain(`  lethe deletions ${verb} TENANT`);
    }
  });

  it('a mistyped option is a usage error that suggests the option meant', async () => {
    // Act
    const result = await lethe(['streams', 'list', 'acme', '--limt', '5'], () => ({ status: 200 }));

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
    expect(result.stderr).toBe(
      "lethe: unknown option --limt (did you mean --limit?)\nRun 'lethe --help' for usage.\n",
    );
  });
});
