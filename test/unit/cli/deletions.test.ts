import { describe, expect, it } from 'vitest';
import { run } from '../../../lib/cli/main.ts';
import type { DeletionReceipt } from '../../../lib/core/index.ts';
import {
  aReceipt,
  cliDependencies,
  ctrlC,
  type FakeReply,
  fakeFetch,
  LOCAL,
  lethe,
  line,
  memoryOutput,
} from '../../helpers/cli.ts';
import { DELETION_ID } from '../../helpers/records.ts';

const BASE = 'http://127.0.0.1:3000/v1/tenants/acme';
const REQUESTED = '2026-03-01T11:00:00.000Z';
const WALL_START = Date.parse(REQUESTED) + 250;

const scheduled = (executeAfter: string, overrides: Partial<DeletionReceipt> = {}) => ({
  ...aReceipt({ state: 'SCHEDULED', attempts: 0, requestedAt: REQUESTED, executeAfter }),
  ...overrides,
});
const inSeconds = (seconds: number) => new Date(WALL_START + seconds * 1000).toISOString();
const ok = (body: DeletionReceipt, status = 200): FakeReply => ({ status, body });

/** The DELETE answers `accepted`; each read answers the next of `reads`. */
function deletion(accepted: DeletionReceipt, reads: DeletionReceipt[]) {
  return fakeFetch((request) =>
    request.method === 'GET' ? ok(reads.shift() ?? accepted) : ok(accepted, 202),
  );
}

describe('lethe delete --grace', () => {
  it('sends the grace window in seconds and says when the deletion starts and how to stop it', async () => {
    // Prepare
    const api = fakeFetch(() => ok(scheduled('2026-03-02T11:00:00.000Z'), 202));
    const { deps, stdout } = cliDependencies({ fetch: api.fetch, wallClock: () => WALL_START });

    // Act
    const code = await run(['delete', 'acme/logs', '--grace', '24h', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map(line)).toEqual([`DELETE ${BASE}/streams/logs?graceSeconds=86400`]);
    expect(stdout.text()).toBe(
      [
        `SCHEDULED acme/logs generation 1: nothing deleted yet; the deletion starts at 2026-03-02T11:00:00.000Z, in 23h 59m (deletion ${DELETION_ID})`,
        `cancel it:    lethe deletions cancel acme ${DELETION_ID}`,
        `start it now: lethe deletions expedite acme ${DELETION_ID}`,
        `follow it:    lethe deletions get acme ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('sends no grace window when none is given: the stack default applies', async () => {
    // Act
    const result = await lethe(['streams', 'delete', 'acme/logs'], () =>
      ok(aReceipt({ state: 'PENDING' }), 202),
    );

    // Assess
    expect(result.sent.map(line)).toEqual([`DELETE ${BASE}/streams/logs`]);
  });

  it('with --wait counts down to the start, then follows the deletion to its end', async () => {
    // Prepare
    const executeAfter = inSeconds(12);
    const api = deletion(scheduled(executeAfter), [
      scheduled(executeAfter),
      aReceipt({ state: 'RUNNING', objectsDeleted: 100, executeAfter }),
      aReceipt({ state: 'COMPLETED', objectsDeleted: 250, executeAfter }),
    ]);
    const { deps, stderr } = cliDependencies({ fetch: api.fetch, wallClock: () => WALL_START });

    // Act
    const code = await run(['delete', 'acme/logs', '--grace', '12s', '--wait', ...LOCAL], deps);

    // Assess: read at 10 s (every 10 s while the start is ahead), then every second once due.
    expect(code).toBe(0);
    expect(api.sent.map((request) => request.method)).toEqual(['DELETE', 'GET', 'GET', 'GET']);
    expect(stderr.text()).toBe(
      [
        `lethe: SCHEDULED, starts in 12s (at ${executeAfter})`,
        `lethe: SCHEDULED, starts in 7s (at ${executeAfter})`,
        `lethe: SCHEDULED, starts in 2s (at ${executeAfter})`,
        'lethe: RUNNING, 100 objects deleted, elapsed 0s',
        `lethe: COMPLETED, 250 objects deleted, 150 objects/s, elapsed 1s, deletion ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('with --wait exits 9 when the deletion is cancelled while it waits', async () => {
    // Prepare
    const executeAfter = inSeconds(3_600);
    const cancelled = scheduled(executeAfter, {
      state: 'CANCELLED',
      cancelledAt: '2026-03-01T11:00:10.000Z',
    });
    const api = deletion(scheduled(executeAfter), [cancelled]);
    const { deps, stdout, stderr } = cliDependencies({
      fetch: api.fetch,
      wallClock: () => WALL_START,
    });

    // Act
    const code = await run(['delete', 'acme/logs', '--grace', '1h', '--wait', ...LOCAL], deps);

    // Assess
    expect(code).toBe(9);
    expect(stderr.text().split('\n').at(-2)).toBe(
      `lethe: CANCELLED, nothing was deleted, deletion ${DELETION_ID}`,
    );
    expect(stdout.text()).toBe(
      `CANCELLED acme/logs generation 1 at 2026-03-01T11:00:10.000Z: nothing was deleted (deletion ${DELETION_ID})\n`,
    );
  });

  it('shows the countdown on a TTY as one line redrawn in place', async () => {
    // Prepare
    const executeAfter = inSeconds(125);
    const api = deletion(scheduled(executeAfter), [
      scheduled(executeAfter),
      scheduled(executeAfter),
      aReceipt({ state: 'COMPLETED', executeAfter }),
    ]);
    const stderr = memoryOutput({ isTTY: true, columns: 200 });
    const { deps } = cliDependencies({ fetch: api.fetch, stderr, wallClock: () => WALL_START });

    // Act
    await run(['delete', 'acme/logs', '--wait', '--interval', '60', ...LOCAL], deps);

    // Assess
    expect(stderr.chunks.slice(0, 3)).toEqual([
      `\rSCHEDULED, starts in 2m 05s (at ${executeAfter})\x1b[K`,
      `\rSCHEDULED, starts in 1m 05s (at ${executeAfter})\x1b[K`,
      `\rSCHEDULED, starts in 5s (at ${executeAfter})\x1b[K`,
    ]);
  });
});

describe('Ctrl-C during --wait', () => {
  it('clears the bar, says the deletion goes on and how to follow it, and exits 130', async () => {
    // Prepare
    const key = ctrlC();
    const api = fakeFetch((request) => {
      if (request.method === 'DELETE') return ok(aReceipt({ state: 'PENDING' }), 202);
      key.press();
      return ok(aReceipt({ state: 'RUNNING', objectsDeleted: 5 }));
    });
    const stderr = memoryOutput({ isTTY: true, columns: 200 });
    const { deps, stdout } = cliDependencies({
      fetch: api.fetch,
      stderr,
      interrupts: key.interrupts,
    });

    // Act
    const code = await run(['delete', 'acme/logs', '--wait', ...LOCAL], deps);

    // Assess
    expect(code).toBe(130);
    expect(stdout.text()).toBe('');
    expect(stderr.chunks).toEqual([
      '\r[███                 ]  PENDING  0 objects deleted  elapsed 0s\x1b[K',
      '\r\x1b[K',
      `lethe: the deletion goes on: follow it with lethe deletions get acme ${DELETION_ID}\n`,
    ]);
    expect(key.listeners.size).toBe(0);
  });

  it('during a countdown, also says how to cancel the deletion', async () => {
    // Prepare
    const key = ctrlC();
    let sleeps = 0;
    const { deps, stderr } = cliDependencies({
      fetch: fakeFetch(() => ok(scheduled(inSeconds(600)), 202)).fetch,
      interrupts: key.interrupts,
      sleep: async () => {
        if (++sleeps === 3) key.press();
      },
    });

    // Act
    const code = await run(['delete', 'acme/logs', '--grace', '10m', '--wait', ...LOCAL], deps);

    // Assess
    expect(code).toBe(130);
    expect(stderr.text()).toMatch(
      new RegExp(
        `\\nlethe: the deletion goes on: follow it with lethe deletions get acme ${DELETION_ID}\\n` +
          `cancel it with lethe deletions cancel acme ${DELETION_ID}\\n$`,
      ),
    );
  });

  it('is left alone outside --wait: no listener is added', async () => {
    // Prepare
    const key = ctrlC();
    const added: number[] = [];
    const { deps } = cliDependencies({
      fetch: fakeFetch(() => ok(aReceipt({ state: 'PENDING' }), 202)).fetch,
      interrupts: (listener) => {
        added.push(1);
        return key.interrupts(listener);
      },
    });

    // Act
    const code = await run(['delete', 'acme/logs', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(added).toEqual([]);
  });
});

describe('lethe deletions cancel', () => {
  it('posts to the cancel route and says the stream is ACTIVE again', async () => {
    // Prepare
    const cancelled = scheduled(inSeconds(60), {
      state: 'CANCELLED',
      cancelledAt: '2026-03-01T11:00:30.000Z',
    });

    // Act
    const result = await lethe(['deletions', 'cancel', 'acme', DELETION_ID], () => ok(cancelled));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`POST ${BASE}/deletions/${DELETION_ID}/cancel`]);
    expect(result.stdout).toBe(
      `CANCELLED acme/logs generation 1 at 2026-03-01T11:00:30.000Z: nothing was deleted (deletion ${DELETION_ID})\n` +
        'acme/logs is ACTIVE again, its data untouched\n',
    );
  });

  it('exits 4 with the API message when the deletion has started', async () => {
    // Prepare
    const message = `deletion ${DELETION_ID} is RUNNING: only a SCHEDULED deletion can be cancelled`;

    // Act
    const result = await lethe(['deletions', 'cancel', 'acme', DELETION_ID], () => ({
      status: 409,
      body: { error: { code: 'DeletionNotCancellable', message } },
    }));

    // Assess
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`lethe: DeletionNotCancellable: ${message} (HTTP 409)\n`);
  });

  it('deletions get exits 9 for a CANCELLED receipt', async () => {
    // Act
    const result = await lethe(['deletions', 'get', 'acme', DELETION_ID], () =>
      ok(scheduled(inSeconds(60), { state: 'CANCELLED' })),
    );

    // Assess
    expect(result.code).toBe(9);
  });
});

describe('lethe deletions expedite', () => {
  it('posts to the expedite route and says how to follow the deletion', async () => {
    // Act
    const result = await lethe(['deletions', 'expedite', 'acme', DELETION_ID], () =>
      ok(aReceipt({ state: 'PENDING', attempts: 0 }), 202),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`POST ${BASE}/deletions/${DELETION_ID}/expedite`]);
    expect(result.stdout).toBe(
      `PENDING acme/logs generation 1: 0 objects (0 B) deleted so far (deletion ${DELETION_ID}, attempts 0)\n` +
        `follow it: lethe deletions get acme ${DELETION_ID}\n`,
    );
  });

  it('with --wait follows the deletion to COMPLETED', async () => {
    // Prepare
    const api = fakeFetch((request) =>
      request.method === 'POST'
        ? ok(aReceipt({ state: 'PENDING' }), 202)
        : ok(aReceipt({ state: 'COMPLETED', objectsDeleted: 3 })),
    );
    const { deps, stdout } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(
      ['deletions', 'expedite', 'acme', DELETION_ID, '--wait', ...LOCAL],
      deps,
    );

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map(line)).toEqual([
      `POST ${BASE}/deletions/${DELETION_ID}/expedite`,
      `GET ${BASE}/deletions/${DELETION_ID}`,
    ]);
    expect(stdout.text()).toMatch(/^COMPLETED acme\/logs generation 1: 3 objects/);
  });

  it('says how long the deletion took from its start, not from the request that scheduled it', async () => {
    // Prepare: asked at 11:00 with a grace window, expedited at 11:40, done 8 seconds later.
    const done = aReceipt({
      state: 'COMPLETED',
      objectsDeleted: 3,
      requestedAt: REQUESTED,
      executeAfter: '2026-03-01T11:40:00.000Z',
      completedAt: '2026-03-01T11:40:08.000Z',
    });

    // Act
    const result = await lethe(['deletions', 'get', 'acme', DELETION_ID], () => ok(done));

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('3 objects (0 B) deleted in 8s, location verified empty');
  });
});

describe('lethe deletions list', () => {
  const other = '9a8b7c6d-1e2f-4a3b-8c9d-0e1f2a3b4c5d';

  it('sends the filters and prints a table, newest first, and the command for the next page', async () => {
    // Prepare: the page as sent, oldest first, to show the CLI's order.
    const older = aReceipt({
      state: 'COMPLETED',
      objectsDeleted: 12_345,
      requestedAt: '2026-02-01T09:00:00.000Z',
    });
    const newer = {
      ...aReceipt({ state: 'FAILED', objectsDeleted: 7, stream: 'metrics' }),
      deletionId: other,
      partitionsBefore: '2026-02-15',
    };

    // Act
    const result = await lethe(
      ['deletions', 'list', 'acme', '--state', 'failed', '--limit', '2'],
      () => ({ status: 200, body: { deletions: [older, newer], nextToken: 'tok' } }),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`GET ${BASE}/deletions?state=FAILED&limit=2`]);
    expect(result.stdout).toBe(
      [
        'DELETION                              STREAM   SCOPE              STATE      REQUESTED                 OBJECTS DELETED',
        `${other}  metrics  before 2026-02-15  FAILED     2026-03-01T11:00:00.000Z                7`,
        `${DELETION_ID}  logs     stream             COMPLETED  2026-02-01T09:00:00.000Z           12,345`,
        'more: lethe deletions list acme --state FAILED --limit 2 --next-token tok',
        '',
      ].join('\n'),
    );
  });

  it('passes --next-token on, and says when there is nothing to list', async () => {
    // Act
    const result = await lethe(
      ['deletions', 'list', 'acme', '--state', 'SCHEDULED', '--next-token', 'a b'],
      () => ({ status: 200, body: { deletions: [] } }),
    );

    // Assess
    expect(result.sent.map(line)).toEqual([`GET ${BASE}/deletions?state=SCHEDULED&nextToken=a+b`]);
    expect(result.stdout).toBe('no SCHEDULED deletions for tenant acme\n');
  });

  it('--json prints the page as the API answered it', async () => {
    // Prepare
    const page = { deletions: [aReceipt()], nextToken: 'tok' };

    // Act
    const result = await lethe(['deletions', 'list', 'acme', '--json'], () => ({
      status: 200,
      body: page,
    }));

    // Assess
    expect(JSON.parse(result.stdout)).toEqual(page);
  });
});
