import { describe, expect, it } from 'vitest';
import { run } from '../../../lib/cli/main.ts';
import { toReceipt, toStreamView } from '../../../lib/core/index.ts';
import {
  apiError,
  aReceipt,
  cliDependencies,
  type FakeReply,
  fakeFetch,
  LOCAL,
  lethe,
} from '../../helpers/cli.ts';
import { aDeletion, aStream, DELETION_ID } from '../../helpers/records.ts';

const STREAM = toStreamView(aStream());

describe('streams', () => {
  it('create says a new incarnation was created', async () => {
    // Act
    const result = await lethe(['streams', 'create', 'acme/logs'], () => ({
      status: 201,
      body: STREAM,
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map((request) => `${request.method} ${request.url}`)).toEqual([
      'PUT http://127.0.0.1:3000/v1/tenants/acme/streams/logs',
    ]);
    expect(result.stdout).toBe(
      'created acme/logs generation 1 at s3://lethe-data/streams/acme/logs/1/\n',
    );
  });

  it('create says when the stream was already ACTIVE', async () => {
    // Act
    const result = await lethe(['streams', 'create', 'acme/logs'], () => ({
      status: 200,
      body: STREAM,
    }));

    // Assess
    expect(result.stdout).toBe(
      'acme/logs is already ACTIVE, generation 1 at s3://lethe-data/streams/acme/logs/1/\n',
    );
  });

  it('get --json prints the raw JSON response', async () => {
    // Act
    const result = await lethe(['streams', 'get', 'acme/logs', '--json'], () => ({
      status: 200,
      body: STREAM,
    }));

    // Assess
    expect(JSON.parse(result.stdout)).toEqual(STREAM);
    expect(result.stdout.endsWith('}\n')).toBe(true);
  });

  it('--json prints the error body on stdout too', async () => {
    // Act
    const result = await lethe(['streams', 'get', 'acme/logs', '--json'], () =>
      apiError(404, 'StreamNotFound', 'stream acme/logs does not exist'),
    );

    // Assess
    expect(result.code).toBe(3);
    expect(result.stdout).toBe(
      '{"error":{"code":"StreamNotFound","message":"stream acme/logs does not exist"}}\n',
    );
  });

  it('list prints a table, and how to get the next page', async () => {
    // Prepare
    const other = toStreamView(
      aStream({ stream: 'metrics', generation: 3, prefix: 'streams/acme/metrics/3/' }),
    );

    // Act
    const result = await lethe(['streams', 'list', 'acme', '--limit', '2'], () => ({
      status: 200,
      body: { streams: [STREAM, other], nextToken: 'tok' },
    }));

    // Assess
    expect(result.sent[0]?.url).toBe('http://127.0.0.1:3000/v1/tenants/acme/streams?limit=2');
    expect(result.stdout).toBe(
      [
        'STREAM   STATE   GENERATION  CREATED                   LOCATION',
        'logs     ACTIVE  1           2026-02-01T00:00:00.000Z  s3://lethe-data/streams/acme/logs/1/',
        'metrics  ACTIVE  3           2026-02-01T00:00:00.000Z  s3://lethe-data/streams/acme/metrics/3/',
        'more: --next-token tok',
        '',
      ].join('\n'),
    );
  });

  it('list says when a tenant has no streams', async () => {
    // Act
    const result = await lethe(['streams', 'list', 'acme'], () => ({
      status: 200,
      body: { streams: [] },
    }));

    // Assess
    expect(result.stdout).toBe('no streams for tenant acme\n');
  });
});

describe('ingest', () => {
  it('sends the file as it is and says where the events went', async () => {
    // Prepare
    const api = fakeFetch(() => ({
      status: 201,
      body: { key: 'streams/acme/logs/1/e.json', count: 2 },
    }));
    const { deps, stdout } = cliDependencies({
      fetch: api.fetch,
      readInput: async (file) => new TextEncoder().encode(file === 'events.json' ? '[1, 2]' : ''),
    });

    // Act
    const code = await run(['ingest', 'acme/logs', 'events.json', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(api.sent).toEqual([
      {
        method: 'POST',
        url: 'http://127.0.0.1:3000/v1/tenants/acme/streams/logs/events',
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: '[1, 2]',
      },
    ]);
    expect(stdout.text()).toBe('stored 2 events in streams/acme/logs/1/e.json\n');
  });
});

describe('ingest input', () => {
  const sending = async (bytes: Uint8Array) => {
    const api = fakeFetch(() => ({ status: 201, body: { key: 'k.json', count: 1 } }));
    const { deps, stderr } = cliDependencies({ fetch: api.fetch, readInput: async () => bytes });
    const code = await run(['ingest', 'acme/logs', 'events.json', ...LOCAL], deps);
    return { code, sent: api.sent, stderr: stderr.text() };
  };

  it('leaves out a UTF-8 byte order mark, which JSON parsers refuse', async () => {
    // Act
    const result = await sending(new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from('[{"a":1}]')]));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map((request) => request.body)).toEqual(['[{"a":1}]']);
  });

  it.each([
    ['empty', ''],
    ['blank', ' \n\t\n'],
    ['a byte order mark alone', '\ufeff'],
  ])('refuses a file that is %s before sending anything (exit 2)', async (_, text) => {
    // Act
    const result = await sending(new TextEncoder().encode(text));

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
    expect(result.stderr).toContain(
      'lethe: events.json is empty: ingest takes a JSON array of events, e.g. [{"level":"info"}]\n',
    );
  });
});

describe('ingest answers', () => {
  const ingest = async (file: string, reply: FakeReply) => {
    const api = fakeFetch(() => reply);
    const { deps, stdout, stderr } = cliDependencies({
      fetch: api.fetch,
      readInput: async () => new TextEncoder().encode(file),
    });
    const code = await run(['ingest', 'acme/logs', 'events', ...LOCAL], deps);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  };

  it.each<[number, string]>([
    [1, 'stored 1 event in k.json\n'],
    [3, 'stored 3 events in k.json\n'],
  ])('counts %i stored events in good English', async (count, said) => {
    // Act
    const result = await ingest('[]', { status: 201, body: { key: 'k.json', count } });

    // Assess
    expect(result.stdout).toBe(said);
  });

  it('says an NDJSON file needs to be a JSON array', async () => {
    // Act
    const result = await ingest(
      '{"level":"info"}\n{"level":"warn"}\n',
      apiError(400, 'InvalidJson', 'the body is not valid JSON'),
    );

    // Assess
    expect(result.code).toBe(7);
    expect(result.stderr).toBe(
      [
        'lethe: InvalidJson: the body is not valid JSON (HTTP 400)',
        'hint: the file looks like NDJSON (one event per line); the API takes a JSON array: wrap the lines in [ ... ] with commas',
        '',
      ].join('\n'),
    );
  });

  it('says where the JSON broke when the API gives a position', async () => {
    // Prepare
    const reply: FakeReply = {
      status: 400,
      body: { error: { code: 'InvalidJson', message: 'the body is not valid JSON', position: 17 } },
    };

    // Act
    const result = await ingest('{"level":"info"}\n{"level":"warn"}', reply);

    // Assess
    expect(result.stderr).toContain('\nthe API stopped at position 17 (line 2, column 1)\n');
  });

  it('reads the position from the message of a JSON parser', async () => {
    // Prepare
    const message =
      'the body is not valid JSON: Unexpected non-whitespace character after JSON at position 8';

    // Act
    const result = await ingest('{"a":1}\n{"a":2}\n', apiError(400, 'InvalidJson', message));

    // Assess
    expect(result.stderr).toBe(
      [
        `lethe: InvalidJson: ${message} (HTTP 400)`,
        'hint: the file looks like NDJSON (one event per line); the API takes a JSON array: wrap the lines in [ ... ] with commas',
        'the API stopped at position 8 (line 2, column 1)',
        '',
      ].join('\n'),
    );
  });

  it('gives no NDJSON hint for JSON that is merely broken', async () => {
    // Act
    const result = await ingest(
      '[{"level":"info"},',
      apiError(400, 'InvalidJson', 'the body is not valid JSON'),
    );

    // Assess
    expect(result.stderr).toBe('lethe: InvalidJson: the body is not valid JSON (HTTP 400)\n');
  });

  it("gives no NDJSON hint the API's message already gives", async () => {
    // Act
    const result = await ingest(
      '{"a":1}\n{"a":2}\n',
      apiError(
        400,
        'InvalidJson',
        'the body is not valid JSON; it looks like NDJSON (one event per line): send a JSON array, [event, event, ...]',
      ),
    );

    // Assess
    expect(result.stderr).not.toContain('hint: the file looks like NDJSON');
  });

  it('gives the wrap-in-an-array hint for an object only, not for null or a string', async () => {
    // Act
    const refused = apiError(400, 'NotAnArray', 'the body must be a JSON array of events');
    const asNull = await ingest('null', refused);
    const asString = await ingest('"x"', refused);

    // Assess
    expect(asNull.stderr).not.toContain('hint:');
    expect(asString.stderr).not.toContain('hint:');
  });

  it('says a single event needs to be in an array', async () => {
    // Act
    const result = await ingest(
      '{"level":"info"}',
      apiError(400, 'NotAnArray', 'the body must be a JSON array of events'),
    );

    // Assess
    expect(result.stderr).toContain(
      '\nhint: the API takes a JSON array of events: wrap the event in [ ... ]\n',
    );
  });

  it('names the deletion that holds the stream when the 409 body carries its id', async () => {
    // Prepare
    const reply: FakeReply = {
      status: 409,
      body: {
        error: {
          code: 'StreamDeleting',
          message: 'stream acme/logs is being deleted; retry after the deletion completes',
          deletionId: DELETION_ID,
        },
      },
    };

    // Act
    const result = await ingest('[1]', reply);

    // Assess
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      [
        `lethe: StreamDeleting: stream acme/logs is being deleted; retry after the deletion completes (deletion ${DELETION_ID}) (HTTP 409)`,
        `follow it: lethe deletions get acme ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('does not name the deletion twice, and says how to cancel a SCHEDULED one', async () => {
    // Prepare
    const message = `stream acme/logs is scheduled for deletion at 2026-03-02T11:00:00.000Z (deletion ${DELETION_ID}); cancel the deletion to keep it, or retry after it completes`;

    // Act
    const result = await ingest('[1]', apiError(409, 'StreamDeleting', message));

    // Assess
    expect(result.stderr).toBe(
      [
        `lethe: StreamDeleting: ${message} (HTTP 409)`,
        `follow it: lethe deletions get acme ${DELETION_ID}`,
        `cancel it: lethe deletions cancel acme ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });
});

describe('deleting', () => {
  const DELETION = `http://127.0.0.1:3000/v1/tenants/acme/deletions/${DELETION_ID}`;

  it('without --wait prints the receipt and how to follow it', async () => {
    // Act
    const result = await lethe(['delete', 'acme/logs'], () => ({
      status: 202,
      body: aReceipt({ state: 'PENDING', attempts: 0 }),
      headers: { Location: `/v1/tenants/acme/deletions/${DELETION_ID}` },
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map((request) => request.method)).toEqual(['DELETE']);
    expect(result.stdout).toBe(
      `PENDING acme/logs generation 1: 0 objects (0 B) deleted so far (deletion ${DELETION_ID}, attempts 0)\n` +
        `follow it: lethe deletions get acme ${DELETION_ID}\n`,
    );
  });

  it('with --wait follows the receipt to COMPLETED and ends with its summary', async () => {
    // Prepare
    const reads = [
      aReceipt({ state: 'RUNNING', objectsDeleted: 1_000, bytesDeleted: 10_000 }),
      aReceipt({
        state: 'COMPLETED',
        objectsDeleted: 2_406,
        bytesDeleted: 1_258_291,
        completedAt: '2026-03-01T11:00:08.400Z',
      }),
    ];
    const api = fakeFetch((request) =>
      request.method === 'DELETE'
        ? { status: 202, body: aReceipt({ state: 'PENDING', attempts: 0 }) }
        : { status: 200, body: reads.shift() },
    );
    const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(['delete', 'acme/logs', '--wait', '--interval', '2', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map((request) => `${request.method} ${request.url}`)).toEqual([
      'DELETE http://127.0.0.1:3000/v1/tenants/acme/streams/logs',
      `GET ${DELETION}`,
      `GET ${DELETION}`,
    ]);
    expect(stderr.text()).toBe(
      [
        'lethe: PENDING, 0 objects deleted, elapsed 0s',
        'lethe: RUNNING, 1,000 objects deleted, 500 objects/s, elapsed 2s',
        `lethe: COMPLETED, 2,406 objects deleted, 602 objects/s, elapsed 4s, deletion ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
    expect(stdout.text()).toBe(
      `COMPLETED acme/logs generation 1: 2,406 objects (1.2 MiB) deleted in 8s, location verified empty (deletion ${DELETION_ID}, attempts 1)\n`,
    );
  });

  it('with --wait --json prints only the final receipt, and no progress', async () => {
    // Prepare
    const done = aReceipt({ state: 'COMPLETED', completedAt: '2026-03-01T11:00:01.000Z' });
    const result = await lethe(['streams', 'delete', 'acme/logs', '--wait', '--json'], (request) =>
      request.method === 'DELETE'
        ? { status: 202, body: aReceipt({ state: 'PENDING' }) }
        : { status: 200, body: done },
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${JSON.stringify(done)}\n`);
  });

  it('with --wait exits 5 when the deletion ends FAILED, with the failures', async () => {
    // Prepare
    const deletion = aDeletion({
      state: 'FAILED',
      objectsDeleted: 8,
      bytesDeleted: 80,
      failedObjects: 2,
    });
    const failed = toReceipt(deletion, deletion, [
      { key: 'streams/acme/logs/1/a.json', code: 'AccessDenied', message: 'Access Denied' },
      { key: 'streams/acme/logs/1/b.json', code: 'AccessDenied', message: 'Access Denied' },
    ]);

    // Act
    const result = await lethe(['delete', 'acme/logs', '--wait'], (request) =>
      request.method === 'DELETE'
        ? { status: 202, body: aReceipt({ state: 'PENDING' }) }
        : { status: 200, body: failed },
    );

    // Assess
    expect(result.code).toBe(5);
    expect(result.stdout).toBe(
      [
        `FAILED acme/logs generation 1: 8 objects (80 B) deleted, 2 could not be (deletion ${DELETION_ID}, attempts 1)`,
        '  AccessDenied streams/acme/logs/1/a.json: Access Denied',
        '  AccessDenied streams/acme/logs/1/b.json: Access Denied',
        '',
      ].join('\n'),
    );
  });

  it('deletions get exits 5 for a FAILED receipt and 0 for a running one', async () => {
    // Act
    const failed = await lethe(['deletions', 'get', 'acme', DELETION_ID], () => ({
      status: 200,
      body: toReceipt(
        aDeletion({ state: 'FAILED', reason: { code: 'Stalled', message: 'no progress' } }),
      ),
    }));
    const running = await lethe(['deletions', 'get', 'acme', DELETION_ID], () => ({
      status: 200,
      body: aReceipt({ state: 'RUNNING', objectsDeleted: 5 }),
    }));

    // Assess
    expect(failed.code).toBe(5);
    expect(failed.stdout).toBe(
      `FAILED acme/logs generation 1: 0 objects (0 B) deleted (deletion ${DELETION_ID}, attempts 1)\n  Stalled: no progress\n`,
    );
    expect(running.code).toBe(0);
  });

  it('deletions retry posts to the retry route', async () => {
    // Act
    const result = await lethe(['deletions', 'retry', 'acme', DELETION_ID], () => ({
      status: 202,
      body: aReceipt({ state: 'PENDING', attempts: 0 }),
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map((request) => `${request.method} ${request.url}`)).toEqual([
      `POST ${DELETION}/retry`,
    ]);
  });
});
