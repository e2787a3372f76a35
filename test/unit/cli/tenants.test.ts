import { describe, expect, it } from 'vitest';
import { run } from '../../../lib/cli/main.ts';
import type { OffboardingView } from '../../../lib/core/index.ts';
import {
  apiError,
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
import { anOffboarding, OFFBOARDING_ID, REQUESTED } from './offboarding-fixtures.ts';

const BASE = 'http://127.0.0.1:3000/v1/tenants/acme';
const WALL_START = Date.parse(REQUESTED) + 250;
const inSeconds = (seconds: number) => new Date(WALL_START + seconds * 1000).toISOString();
const ok = (body: OffboardingView, status = 200): FakeReply => ({ status, body });
const HEAD = `offboarding of tenant acme (offboarding ${OFFBOARDING_ID})`;

/** The DELETE answers `accepted`; each read answers the next of `reads`. */
function offboarding(accepted: OffboardingView, reads: OffboardingView[]) {
  return fakeFetch((request) =>
    request.method === 'GET' ? ok(reads.shift() ?? accepted) : ok(accepted, 202),
  );
}

describe('lethe tenants delete', () => {
  it('sends the grace window in seconds and prints the offboarding, how to cancel and follow it', async () => {
    // Prepare
    const api = fakeFetch(() => ok(anOffboarding({ executeAfter: inSeconds(86_400) }), 202));
    const { deps, stdout } = cliDependencies({ fetch: api.fetch, wallClock: () => WALL_START });

    // Act
    const code = await run(['tenants', 'delete', 'acme', '--grace', '24h', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map(line)).toEqual([`DELETE ${BASE}?graceSeconds=86400`]);
    expect(stdout.text()).toBe(
      [
        `SCHEDULED ${HEAD}: nothing deleted yet`,
        'streams    3 taken in so far',
        'deletions  3 SCHEDULED',
        `requested  ${REQUESTED}`,
        `starts     ${inSeconds(86_400)}, in 1d 00h`,
        'cancel it:  lethe tenants cancel acme',
        'follow it:  lethe tenants get acme',
        '',
      ].join('\n'),
    );
  });

  it('sends no grace window when none is given: the stack default applies', async () => {
    // Act
    const result = await lethe(['tenants', 'delete', 'acme'], () =>
      ok(anOffboarding({ state: 'RUNNING' }), 202),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`DELETE ${BASE}`]);
    expect(result.stdout).toMatch(/^RUNNING offboarding of tenant acme /);
  });

  it('--json prints the API body and nothing else', async () => {
    // Prepare
    const body = anOffboarding({ deletions: [DELETION_ID] });

    // Act
    const result = await lethe(['tenants', 'delete', 'acme', '--json'], () => ok(body, 202));

    // Assess
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(body);
    expect(result.stderr).toBe('');
  });

  it('exits 3 for a tenant with no streams', async () => {
    // Act
    const result = await lethe(['tenants', 'delete', 'acme'], () =>
      apiError(404, 'TenantNotFound', 'tenant acme has no streams'),
    );

    // Assess
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('lethe: TenantNotFound: tenant acme has no streams (HTTP 404)\n');
  });
});

describe('lethe tenants delete --wait', () => {
  it('counts down to the start, then follows the offboarding until it is COMPLETED', async () => {
    // Prepare
    const executeAfter = inSeconds(12);
    const api = offboarding(
      anOffboarding({ executeAfter, streams: 1, deletionStates: { SCHEDULED: 1 } }),
      [
        anOffboarding({ executeAfter }),
        anOffboarding({
          executeAfter,
          state: 'RUNNING',
          deletionStates: { RUNNING: 3 },
          objectsDeleted: 100,
        }),
        anOffboarding({
          executeAfter,
          state: 'COMPLETED',
          deletionStates: { COMPLETED: 3 },
          objectsDeleted: 250,
          bytesDeleted: 2_500,
          completedAt: inSeconds(14),
        }),
      ],
    );
    const { deps, stdout, stderr } = cliDependencies({
      fetch: api.fetch,
      wallClock: () => WALL_START,
    });

    // Act
    const code = await run(
      ['tenants', 'delete', 'acme', '--grace', '12s', '--wait', ...LOCAL],
      deps,
    );

    // Assess: read at 10 s (every 10 s while the start is ahead), then every second once due.
    expect(code).toBe(0);
    expect(api.sent.map(line)).toEqual([
      `DELETE ${BASE}?graceSeconds=12`,
      `GET ${BASE}/offboarding`,
      `GET ${BASE}/offboarding`,
      `GET ${BASE}/offboarding`,
    ]);
    const countdown = (left: string, streams: string, scheduled: number) =>
      `lethe: SCHEDULED, starts in ${left} (at ${executeAfter}), ${streams} taken in, deletions ${scheduled} SCHEDULED, 0 objects deleted`;
    expect(stderr.text()).toBe(
      [
        countdown('12s', '1 stream', 1),
        countdown('7s', '1 stream', 1),
        countdown('2s', '3 streams', 3),
        'lethe: RUNNING, 3 streams taken in, deletions 3 RUNNING, 100 objects deleted',
        `lethe: COMPLETED, 3 streams taken in, deletions 3 COMPLETED, 250 objects deleted, offboarding ${OFFBOARDING_ID}`,
        '',
      ].join('\n'),
    );
    expect(stdout.text()).toBe(
      [
        `COMPLETED ${HEAD}: every stream's deletion COMPLETED`,
        'streams    3 taken in',
        'deletions  3 COMPLETED',
        'deleted    250 objects (2.4 KiB)',
        `requested  ${REQUESTED}`,
        `completed  ${inSeconds(14)}`,
        'its deletions:  lethe deletions list acme',
        '',
      ].join('\n'),
    );
  });

  it('exits 9 when the offboarding is cancelled while it waits', async () => {
    // Prepare
    const cancelled = anOffboarding({
      state: 'CANCELLED',
      deletionStates: { CANCELLED: 3 },
      cancelledAt: inSeconds(5),
    });
    const api = offboarding(anOffboarding({ executeAfter: inSeconds(3_600) }), [cancelled]);
    const { deps, stdout, stderr } = cliDependencies({
      fetch: api.fetch,
      wallClock: () => WALL_START,
    });

    // Act
    const code = await run(
      ['tenants', 'delete', 'acme', '--grace', '1h', '--wait', ...LOCAL],
      deps,
    );

    // Assess
    expect(code).toBe(9);
    expect(stderr.text().split('\n').at(-2)).toBe(
      `lethe: CANCELLED, 3 streams taken in, deletions 3 CANCELLED, nothing was deleted, offboarding ${OFFBOARDING_ID}`,
    );
    expect(stdout.text().split('\n')[0]).toBe(`CANCELLED ${HEAD}: nothing was deleted`);
  });

  it('with --json prints only the final offboarding, and nothing on stderr', async () => {
    // Prepare
    const done = anOffboarding({ state: 'COMPLETED', deletionStates: { COMPLETED: 3 } });
    const api = offboarding(anOffboarding({ state: 'RUNNING' }), [done]);
    const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(['tenants', 'delete', 'acme', '--wait', '--json', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(JSON.parse(stdout.text())).toEqual(done);
    expect(stderr.text()).toBe('');
  });

  it('reads at --interval', async () => {
    // Prepare
    const slept: number[] = [];
    const done = anOffboarding({ state: 'COMPLETED', deletionStates: { COMPLETED: 3 } });
    const api = offboarding(anOffboarding({ state: 'RUNNING' }), [
      anOffboarding({ state: 'RUNNING' }),
      done,
    ]);
    const { deps } = cliDependencies({
      fetch: api.fetch,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });

    // Act
    const code = await run(
      ['tenants', 'delete', 'acme', '--wait', '--interval', '2.5', ...LOCAL],
      deps,
    );

    // Assess
    expect(code).toBe(0);
    expect(slept).toEqual([2_500, 2_500]);
  });

  it('Ctrl-C clears the line, says the offboarding goes on and how to follow it, exits 130', async () => {
    // Prepare
    const key = ctrlC();
    const api = fakeFetch((request) => {
      const running = anOffboarding({ state: 'RUNNING', deletionStates: { RUNNING: 3 } });
      if (request.method === 'DELETE') return ok(running, 202);
      key.press();
      return ok({ ...running, objectsDeleted: 5 });
    });
    const stderr = memoryOutput({ isTTY: true, columns: 200 });
    const { deps, stdout } = cliDependencies({
      fetch: api.fetch,
      stderr,
      interrupts: key.interrupts,
    });

    // Act
    const code = await run(['tenants', 'delete', 'acme', '--wait', ...LOCAL], deps);

    // Assess
    expect(code).toBe(130);
    expect(stdout.text()).toBe('');
    expect(stderr.chunks).toEqual([
      '\r[███                 ]  RUNNING  3 streams taken in  deletions 3 RUNNING  0 objects deleted\x1b[K',
      '\r\x1b[K',
      'lethe: the offboarding goes on: follow it with lethe tenants get acme\n',
    ]);
    expect(key.listeners.size).toBe(0);
  });

  it('Ctrl-C during the countdown also says how to cancel it', async () => {
    // Prepare
    const key = ctrlC();
    let sleeps = 0;
    const { deps, stderr } = cliDependencies({
      fetch: fakeFetch(() => ok(anOffboarding({ executeAfter: inSeconds(600) }), 202)).fetch,
      interrupts: key.interrupts,
      wallClock: () => WALL_START,
      sleep: async () => {
        if (++sleeps === 3) key.press();
      },
    });

    // Act
    const code = await run(
      ['tenants', 'delete', 'acme', '--grace', '10m', '--wait', ...LOCAL],
      deps,
    );

    // Assess
    expect(code).toBe(130);
    expect(stderr.text()).toMatch(
      /\nlethe: the offboarding goes on: follow it with lethe tenants get acme\ncancel it with lethe tenants cancel acme\n$/,
    );
  });

  it('leaves Ctrl-C alone without --wait: no listener is added', async () => {
    // Prepare
    const added: number[] = [];
    const { deps } = cliDependencies({
      fetch: fakeFetch(() => ok(anOffboarding(), 202)).fetch,
      interrupts: (listener) => {
        added.push(1);
        return ctrlC().interrupts(listener);
      },
    });

    // Act
    const code = await run(['tenants', 'delete', 'acme', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(added).toEqual([]);
  });
});

describe('lethe tenants get', () => {
  it('reads the offboarding and prints the same summary', async () => {
    // Prepare
    const view = anOffboarding({
      state: 'RUNNING',
      deletionStates: { RUNNING: 1, COMPLETED: 2 },
      objectsDeleted: 1_200,
      bytesDeleted: 26_010,
    });

    // Act
    const result = await lethe(['tenants', 'get', 'acme'], () => ok(view));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`GET ${BASE}/offboarding`]);
    expect(result.stdout).toBe(
      [
        `RUNNING ${HEAD}: its streams' deletions are under way`,
        'streams    3 taken in so far',
        'deletions  1 RUNNING, 2 COMPLETED',
        'deleted    1,200 objects (25.4 KiB) so far',
        `requested  ${REQUESTED}`,
        'started    2026-03-02T12:00:00.000Z',
        'follow it:      lethe tenants get acme',
        'its deletions:  lethe deletions list acme',
        '',
      ].join('\n'),
    );
  });

  it('--json prints the API body', async () => {
    // Prepare
    const view = anOffboarding({ deletions: [DELETION_ID] });

    // Act
    const result = await lethe(['tenants', 'get', 'acme', '--json'], () => ok(view));

    // Assess
    expect(result.stdout).toBe(`${JSON.stringify(view)}\n`);
  });

  it('exits 9 for a CANCELLED offboarding, as for a CANCELLED receipt', async () => {
    // Act
    const result = await lethe(['tenants', 'get', 'acme'], () =>
      ok(anOffboarding({ state: 'CANCELLED', deletionStates: { CANCELLED: 3 } })),
    );

    // Assess
    expect(result.code).toBe(9);
  });

  it('exits 3 for a tenant never offboarded', async () => {
    // Act
    const result = await lethe(['tenants', 'get', 'acme'], () =>
      apiError(404, 'OffboardingNotFound', 'tenant acme has no offboarding'),
    );

    // Assess
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'lethe: OffboardingNotFound: tenant acme has no offboarding (HTTP 404)\n',
    );
  });
});

describe('lethe tenants cancel', () => {
  it('posts to the cancel route, prints the CANCELLED offboarding and exits 0', async () => {
    // Prepare
    const cancelled = anOffboarding({
      state: 'CANCELLED',
      deletionStates: { CANCELLED: 3 },
      cancelledAt: '2026-03-01T12:05:00.000Z',
    });

    // Act
    const result = await lethe(['tenants', 'cancel', 'acme'], () => ok(cancelled));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`POST ${BASE}/offboarding/cancel`]);
    expect(result.stdout).toBe(
      [
        `CANCELLED ${HEAD}: nothing was deleted`,
        'streams    3 taken in',
        'deletions  3 CANCELLED',
        `requested  ${REQUESTED}`,
        'cancelled  2026-03-01T12:05:00.000Z',
        'the tenant may create streams again',
        'its deletions:  lethe deletions list acme',
        '',
      ].join('\n'),
    );
  });

  it('exits 4 once the grace window is over, with how to follow it', async () => {
    // Prepare
    const message =
      'the offboarding of tenant acme cannot be cancelled: its grace window ended at 2026-03-02T12:00:00.000Z';

    // Act
    const result = await lethe(['tenants', 'cancel', 'acme'], () =>
      apiError(409, 'OffboardingNotCancellable', message),
    );

    // Assess
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      `lethe: OffboardingNotCancellable: ${message} (HTTP 409)\nfollow it: lethe tenants get acme\n`,
    );
  });
});

describe('a stream created under a tenant being offboarded', () => {
  it('exits 4 and points at the offboarding', async () => {
    // Prepare
    const message = `tenant acme is being offboarded (offboarding ${OFFBOARDING_ID}): no stream can be created under it until that ends`;

    // Act
    const result = await lethe(['streams', 'create', 'acme/logs'], () => ({
      ...apiError(409, 'TenantDeleting', message),
      headers: { 'Retry-After': '60' },
    }));

    // Assess
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      `lethe: TenantDeleting: ${message} (HTTP 409)\n` +
        'hint: the tenant is being offboarded: lethe tenants get acme\n',
    );
  });
});

describe('lethe tenants', () => {
  it('bare, lists its subcommands on stderr and exits 2', async () => {
    // Prepare
    const { deps, stdout, stderr } = cliDependencies();

    // Act
    const code = await run(['tenants'], deps);

    // Assess
    expect(code).toBe(2);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toMatch(/^lethe: tenants needs a subcommand:\n {2}lethe tenants delete /);
    for (const verb of ['delete', 'get', 'cancel']) {
      expect(stderr.text()).toContain(`  lethe tenants ${verb} TENANT`);
    }
  });
});
