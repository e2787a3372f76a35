import { describe, expect, it } from 'vitest';
import type { Interrupts } from '../../../lib/cli/commands.ts';
import { run } from '../../../lib/cli/main.ts';
import { ingestBatches, SeedReporter, seedBatch, seedProgress } from '../../../lib/cli/seed.ts';
import { toStreamView } from '../../../lib/core/index.ts';
import {
  apiError,
  cliDependencies,
  ctrlC,
  type FakeReply,
  fakeFetch,
  LOCAL,
  memoryOutput,
  type SentRequest,
} from '../../helpers/cli.ts';
import { aStream, DELETION_ID } from '../../helpers/records.ts';

const STREAM = toStreamView(aStream());
const EVENTS = 'http://127.0.0.1:3000/v1/tenants/acme/streams/logs/events';

/** The stream for the GET; each POST answered by `ingest`, a tick later, so that they overlap. */
function seedApi(ingest: (post: number, request: SentRequest) => FakeReply = () => stored()) {
  let posts = 0;
  let inFlight = 0;
  const peak = { inFlight: 0 };
  const api = fakeFetch(async (request) => {
    if (request.method === 'GET') return { status: 200, body: STREAM };
    const post = ++posts;
    peak.inFlight = Math.max(peak.inFlight, ++inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
    return ingest(post, request);
  });
  return { ...api, peak, posts: () => api.sent.filter((request) => request.method === 'POST') };
}

const stored = (): FakeReply => ({
  status: 201,
  body: { key: 'streams/acme/logs/1/dt=2026-03-01/k.json', count: 1 },
});

async function seed(args: string[], api: ReturnType<typeof seedApi>, interrupts?: Interrupts) {
  const { deps, stdout, stderr } = cliDependencies({
    fetch: api.fetch,
    ...(interrupts ? { interrupts } : {}),
  });
  const code = await run(['seed', 'acme/logs', ...args, ...LOCAL], deps);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('a seed batch', () => {
  it('is a JSON array of one or two small events, numbered', () => {
    // Act
    const odd = JSON.parse(new TextDecoder().decode(seedBatch(7)));
    const even = JSON.parse(new TextDecoder().decode(seedBatch(8)));

    // Assess
    expect(odd).toEqual([{ seq: 7, seeded: true }]);
    expect(even).toEqual([
      { seq: 8, seeded: true },
      { seq: 8, seeded: true, second: true },
    ]);
    expect(seedBatch(1_000_000).length).toBeLessThan(100);
  });
});

describe('lethe seed', () => {
  it('checks the stream, sends N batches C at a time, and says where they went', async () => {
    // Prepare
    const api = seedApi();

    // Act
    const result = await seed(['--objects', '40', '--concurrency', '4'], api);

    // Assess
    expect(result.code).toBe(0);
    expect(api.sent[0]).toMatchObject({
      method: 'GET',
      url: 'http://127.0.0.1:3000/v1/tenants/acme/streams/logs',
    });
    const posts = api.posts();
    expect(posts).toHaveLength(40);
    expect(posts.every((post) => post.url === EVENTS)).toBe(true);
    const seqs = posts.map((post) => (JSON.parse(post.body ?? '') as Array<{ seq: number }>)[0]);
    expect(seqs.map((event) => event?.seq).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
      Array.from({ length: 40 }, (_, n) => n + 1),
    );
    expect(api.peak.inFlight).toBe(4);
    expect(result.stdout).toBe(
      'seeded 40 objects into acme/logs (s3://lethe-data/streams/acme/logs/1/)\n',
    );
    expect(result.stderr).toBe('lethe: seeded 0 of 40 objects\nlethe: seeded 40 of 40 objects\n');
  });

  it('sends 1,000 batches, 16 at a time, by default', async () => {
    // Prepare
    const api = seedApi();

    // Act
    const result = await seed([], api);

    // Assess
    expect(result.code).toBe(0);
    expect(api.posts()).toHaveLength(1_000);
    expect(api.peak.inFlight).toBe(16);
    expect(result.stdout).toBe(
      'seeded 1,000 objects into acme/logs (s3://lethe-data/streams/acme/logs/1/)\n',
    );
  });

  it('never has more in flight than there are objects', async () => {
    // Prepare
    const api = seedApi();

    // Act
    await seed(['--objects', '3', '--concurrency', '64'], api);

    // Assess
    expect(api.posts()).toHaveLength(3);
    expect(api.peak.inFlight).toBe(3);
  });

  it('--json prints the count and the stream, and no progress', async () => {
    // Prepare
    const api = seedApi();

    // Act
    const result = await seed(['--objects', '5', '--json'], api);

    // Assess
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ objects: 5, tenant: 'acme', stream: 'logs' });
    expect(result.stderr).toBe('');
  });

  it('exits 3 for a stream that does not exist, with the command that creates it', async () => {
    // Prepare
    const api = fakeFetch(() => apiError(404, 'StreamNotFound', 'stream acme/logs does not exist'));
    const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(['seed', 'acme/logs', ...LOCAL], deps);

    // Assess
    expect(code).toBe(3);
    expect(api.sent.map((request) => request.method)).toEqual(['GET']);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toBe(
      [
        'lethe: StreamNotFound: stream acme/logs does not exist (HTTP 404)',
        'hint: create it first: lethe streams create acme/logs',
        '',
      ].join('\n'),
    );
  });

  it('stops at once on a 409 and exits 4, saying how many were stored', async () => {
    // Prepare: the stream's deletion is requested while the 10th batch is sent.
    const conflict: FakeReply = {
      status: 409,
      body: {
        error: {
          code: 'StreamDeleting',
          message: 'stream acme/logs is being deleted; retry after the deletion completes',
          deletionId: DELETION_ID,
        },
      },
    };
    const api = seedApi((post) => (post < 10 ? stored() : conflict));

    // Act
    const result = await seed(['--objects', '500', '--concurrency', '4'], api);

    // Assess
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    // The batches already in flight when the first 409 came back, and none after.
    expect(api.posts().length).toBeLessThanOrEqual(9 + 4);
    expect(result.stderr).toBe(
      [
        'lethe: seeded 0 of 500 objects',
        'lethe: stopped after seeding 9 of 500 objects into acme/logs',
        `lethe: StreamDeleting: stream acme/logs is being deleted; retry after the deletion completes (deletion ${DELETION_ID}) (HTTP 409)`,
        `follow it: lethe deletions get acme ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('stops sending on Ctrl-C, waits for those in flight, and exits 130 with the count', async () => {
    // Prepare
    const key = ctrlC();
    const api = seedApi((post) => {
      if (post === 20) key.press();
      return stored();
    });

    // Act
    const result = await seed(['--objects', '5000', '--concurrency', '8'], api, key.interrupts);

    // Assess
    expect(result.code).toBe(130);
    expect(result.stdout).toBe('');
    const sent = api.posts().length;
    expect(sent).toBeGreaterThanOrEqual(20);
    expect(sent).toBeLessThanOrEqual(20 + 8);
    expect(result.stderr).toBe(
      [
        'lethe: seeded 0 of 5,000 objects',
        `lethe: interrupted: seeded ${sent} of 5,000 objects into acme/logs; no more were sent`,
        '',
      ].join('\n'),
    );
    expect(key.listeners.size).toBe(0);
  });
});

describe('ingestBatches', () => {
  it('reports each object stored, and the first error that stopped it', async () => {
    // Prepare
    const counts: number[] = [];
    const failure = new Error('no answer');
    let calls = 0;
    const client = {
      ingest: async () => {
        if (++calls === 4) throw failure;
        return { status: 201, headers: new Headers(), body: { key: 'k', count: 1 } };
      },
    };

    // Act
    const result = await ingestBatches({
      client,
      tenant: 'acme',
      stream: 'logs',
      objects: 10,
      concurrency: 1,
      onStored: (count) => counts.push(count),
    });

    // Assess
    expect(result).toEqual({ stored: 3, failure: { error: failure } });
    expect(counts).toEqual([1, 2, 3]);
    expect(calls).toBe(4);
  });

  it('sends nothing once the signal has aborted', async () => {
    // Prepare
    let calls = 0;
    const client = {
      ingest: async () => {
        calls++;
        return { status: 201, headers: new Headers(), body: { key: 'k', count: 1 } };
      },
    };

    // Act
    const result = await ingestBatches({
      client,
      tenant: 'acme',
      stream: 'logs',
      objects: 10,
      concurrency: 2,
      signal: AbortSignal.abort(),
    });

    // Assess
    expect(result).toEqual({ stored: 0 });
    expect(calls).toBe(0);
  });
});

describe('the seed progress', () => {
  it('reads as a count of a total, with the rate once it is known', () => {
    expect(seedProgress(1_234, 5_000, 312.4)).toBe('seeded 1,234 of 5,000 objects (312/s)');
    expect(seedProgress(0, 5_000)).toBe('seeded 0 of 5,000 objects');
    expect(seedProgress(0, 1)).toBe('seeded 0 of 1 object');
  });

  it('is redrawn in place on a TTY at most every 100 ms, always at the end, and cleared', () => {
    // Prepare
    let clock = 0;
    const output = memoryOutput({ isTTY: true });
    const reporter = new SeedReporter({ output, now: () => clock, total: 5_000 });

    // Act
    reporter.update(0);
    clock = 50;
    reporter.update(10);
    clock = 1_000;
    reporter.update(312);
    clock = 4_000;
    reporter.update(1_234);
    reporter.update(5_000);
    reporter.finish();

    // Assess
    expect(output.chunks).toEqual([
      '\rseeded 0 of 5,000 objects\x1b[K',
      '\rseeded 312 of 5,000 objects (312/s)\x1b[K',
      '\rseeded 1,234 of 5,000 objects (309/s)\x1b[K',
      '\rseeded 5,000 of 5,000 objects (1,250/s)\x1b[K',
      '\r\x1b[K',
    ]);
  });

  it('shows the last count on a pipe too, however soon after the last line it came', () => {
    // Prepare: 300 objects stored in under the five seconds between plain lines
    let clock = 0;
    const output = memoryOutput();
    const reporter = new SeedReporter({ output, now: () => clock, total: 300 });

    // Act
    reporter.update(0);
    clock = 600;
    reporter.update(150);
    clock = 1_200;
    reporter.update(300);
    reporter.finish();

    // Assess
    expect(output.text()).toBe(
      ['lethe: seeded 0 of 300 objects', 'lethe: seeded 300 of 300 objects (250/s)', ''].join('\n'),
    );
  });

  it('is a plain line every five seconds when stderr is not a TTY', () => {
    // Prepare
    let clock = 0;
    const output = memoryOutput();
    const reporter = new SeedReporter({ output, now: () => clock, total: 5_000 });

    // Act
    for (const stored of [0, 300, 600, 900, 1_200, 1_500, 1_800]) {
      reporter.update(stored);
      clock += 1_000;
    }
    reporter.finish();

    // Assess
    expect(output.text()).toBe(
      ['lethe: seeded 0 of 5,000 objects', 'lethe: seeded 1,500 of 5,000 objects (300/s)', ''].join(
        '\n',
      ),
    );
  });
});
