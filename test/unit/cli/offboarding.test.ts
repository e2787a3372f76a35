import { describe, expect, it, vi } from 'vitest';
import { ApiError, type LetheClient, UnreachableError } from '../../../lib/cli/client.ts';
import { deletionCounts, offboardingSummary } from '../../../lib/cli/offboarding-format.ts';
import {
  OffboardingReporter,
  OffboardingWaitInterrupted,
  offboardingInterruptedMessage,
  waitForOffboarding,
} from '../../../lib/cli/offboarding-wait.ts';
import type { OffboardingView } from '../../../lib/core/index.ts';
import { memoryOutput } from '../../helpers/cli.ts';
import { anOffboarding, EXECUTE_AFTER, OFFBOARDING_ID, REQUESTED } from './offboarding-fixtures.ts';

/** A quarter of a second after the request: 23h 59m to go. */
const WALL_NOW = Date.parse(REQUESTED) + 250;

const HEAD = `offboarding of tenant acme (offboarding ${OFFBOARDING_ID})`;

describe('the summary of an offboarding', () => {
  it.each<[string, Partial<OffboardingView>, string[]]>([
    [
      'SCHEDULED: when its deletions start, and how to cancel or follow it',
      {},
      [
        `SCHEDULED ${HEAD}: nothing deleted yet`,
        'streams    3 taken in so far',
        'deletions  3 SCHEDULED',
        `requested  ${REQUESTED}`,
        `starts     ${EXECUTE_AFTER}, in 23h 59m`,
        'cancel it:  lethe tenants cancel acme',
        'follow it:  lethe tenants get acme',
      ],
    ],
    [
      'RUNNING: its deletions by state and what they deleted so far',
      {
        state: 'RUNNING',
        deletionStates: { COMPLETED: 1, RUNNING: 2 },
        objectsDeleted: 1_200,
        bytesDeleted: 26_010,
      },
      [
        `RUNNING ${HEAD}: its streams' deletions are under way`,
        'streams    3 taken in so far',
        'deletions  2 RUNNING, 1 COMPLETED',
        'deleted    1,200 objects (25.4 KiB) so far',
        `requested  ${REQUESTED}`,
        `started    ${EXECUTE_AFTER}`,
        'follow it:      lethe tenants get acme',
        'its deletions:  lethe deletions list acme',
      ],
    ],
    [
      'RUNNING with a FAILED deletion: what holds it up, and how to retry it',
      {
        state: 'RUNNING',
        deletionStates: { COMPLETED: 2, FAILED: 1 },
        objectsDeleted: 10,
        bytesDeleted: 100,
      },
      [
        `RUNNING ${HEAD}: its streams' deletions are under way`,
        'streams    3 taken in so far',
        'deletions  2 COMPLETED, 1 FAILED',
        'deleted    10 objects (100 B) so far',
        `requested  ${REQUESTED}`,
        `started    ${EXECUTE_AFTER}`,
        'follow it:  lethe tenants get acme',
        'it waits on 1 FAILED deletion: lethe deletions list acme --state FAILED, then lethe deletions retry acme DELETION_ID',
      ],
    ],
    [
      'COMPLETED: what it deleted, and when it ended',
      {
        state: 'COMPLETED',
        deletionStates: { COMPLETED: 3 },
        objectsDeleted: 8_000,
        bytesDeleted: 174_899,
        completedAt: '2026-03-02T12:10:00.000Z',
      },
      [
        `COMPLETED ${HEAD}: every stream's deletion COMPLETED`,
        'streams    3 taken in',
        'deletions  3 COMPLETED',
        'deleted    8,000 objects (170.8 KiB)',
        `requested  ${REQUESTED}`,
        'completed  2026-03-02T12:10:00.000Z',
        'its deletions:  lethe deletions list acme',
      ],
    ],
    [
      'CANCELLED: nothing deleted, and the tenant free again',
      {
        state: 'CANCELLED',
        deletionStates: { CANCELLED: 3 },
        cancelledAt: '2026-03-01T12:05:00.000Z',
      },
      [
        `CANCELLED ${HEAD}: nothing was deleted`,
        'streams    3 taken in',
        'deletions  3 CANCELLED',
        `requested  ${REQUESTED}`,
        'cancelled  2026-03-01T12:05:00.000Z',
        'the tenant may create streams again',
        'its deletions:  lethe deletions list acme',
      ],
    ],
    [
      'CANCELLED late: what a deletion that had started deleted',
      {
        state: 'CANCELLED',
        deletionStates: { CANCELLED: 2, COMPLETED: 1 },
        objectsDeleted: 5,
        bytesDeleted: 50,
        cancelledAt: '2026-03-01T12:05:00.000Z',
      },
      [
        `CANCELLED ${HEAD}`,
        'streams    3 taken in',
        'deletions  1 COMPLETED, 2 CANCELLED',
        'deleted    5 objects (50 B)',
        `requested  ${REQUESTED}`,
        'cancelled  2026-03-01T12:05:00.000Z',
        'the tenant may create streams again',
        'its deletions:  lethe deletions list acme',
      ],
    ],
  ])('%s', (_, overrides, lines) => {
    expect(offboardingSummary(anOffboarding(overrides), WALL_NOW)).toBe(`${lines.join('\n')}\n`);
  });

  it('says when the deletions start any moment now, once executeAfter has come', () => {
    expect(offboardingSummary(anOffboarding(), Date.parse(EXECUTE_AFTER))).toContain(
      `starts     ${EXECUTE_AFTER}, any moment now\n`,
    );
  });

  it('says no deletion yet before the fan-out has taken a stream in', () => {
    expect(deletionCounts(anOffboarding({ streams: 0, deletionStates: {} }))).toBe('none yet');
  });
});

/** A client whose reads of the offboarding answer or fail in turn. */
function reads(...answers: Array<OffboardingView | Error>) {
  const getOffboarding = vi.fn<LetheClient['getOffboarding']>(async () => {
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    if (next instanceof Error) throw next;
    return { status: 200, headers: new Headers(), body: next };
  });
  return { getOffboarding };
}

const running = (overrides: Partial<OffboardingView> = {}) =>
  anOffboarding({ state: 'RUNNING', deletionStates: { RUNNING: 3 }, ...overrides });
const completed = () => anOffboarding({ state: 'COMPLETED', deletionStates: { COMPLETED: 3 } });

describe('waiting for an offboarding', () => {
  it('reads it every interval until it is COMPLETED, reporting each read', async () => {
    // Prepare
    const client = reads(running({ objectsDeleted: 4 }), completed());
    const sleep = vi.fn(async (_ms: number) => {});
    const reporter = { update: vi.fn<(view: OffboardingView) => void>(), finish: vi.fn() };

    // Act
    const done = await waitForOffboarding({
      client,
      view: running(),
      intervalMs: 750,
      sleep,
      reporter,
    });

    // Assess
    expect(done.state).toBe('COMPLETED');
    expect(sleep.mock.calls).toEqual([
      [750, undefined],
      [750, undefined],
    ]);
    expect(client.getOffboarding.mock.calls).toEqual([
      ['acme', undefined],
      ['acme', undefined],
    ]);
    expect(reporter.update.mock.calls.map(([view]) => view.objectsDeleted)).toEqual([0, 4, 0]);
    expect(reporter.finish).toHaveBeenCalledTimes(1);
  });

  it.each(['COMPLETED', 'CANCELLED'] as const)(
    'returns at once for an offboarding already %s',
    async (state) => {
      // Prepare
      const client = reads();

      // Act
      const done = await waitForOffboarding({
        client,
        view: anOffboarding({ state }),
        intervalMs: 1_000,
        sleep: async () => {},
      });

      // Assess
      expect(done.state).toBe(state);
      expect(client.getOffboarding).not.toHaveBeenCalled();
    },
  );

  it('reads a SCHEDULED one every scheduledReadMs until its start is due, then every interval', async () => {
    // Prepare: 40 s before executeAfter, one tick every 5 s.
    let clock = Date.parse(EXECUTE_AFTER) - 40_000;
    const client = reads();
    const readAt: number[] = [];
    client.getOffboarding.mockImplementation(async () => {
      readAt.push(clock);
      const body = readAt.length <= 3 ? anOffboarding() : completed();
      return { status: 200, headers: new Headers(), body };
    });

    // Act
    const done = await waitForOffboarding({
      client,
      view: anOffboarding(),
      intervalMs: 5_000,
      sleep: async (ms) => {
        clock += ms;
      },
      wallNow: () => clock,
      scheduledReadMs: 20_000,
    });

    // Assess: reads 20 s and 40 s in (every fourth tick), then at every tick once due.
    expect(done.state).toBe('COMPLETED');
    const due = Date.parse(EXECUTE_AFTER);
    expect(readAt.map((at) => (at - due) / 1000)).toEqual([-20, 0, 5, 10]);
  });

  it('rides out a few failed reads (a restarting API, a 503)', async () => {
    // Prepare
    const client = reads(
      new UnreachableError('cannot reach http://127.0.0.1:3000: ECONNRESET'),
      new ApiError(503, 'HTTP503', 'Service Unavailable', ''),
      completed(),
    );

    // Act
    const done = await waitForOffboarding({
      client,
      view: running(),
      intervalMs: 1,
      sleep: async () => {},
      maxFailedReads: 2,
    });

    // Assess
    expect(done.state).toBe('COMPLETED');
    expect(client.getOffboarding).toHaveBeenCalledTimes(3);
  });

  it('gives up after too many failed reads in a row', async () => {
    // Prepare
    const unreachable = () =>
      new UnreachableError('cannot reach http://127.0.0.1:3000: ECONNRESET');
    const client = reads(unreachable(), unreachable(), unreachable());

    // Act
    const waiting = waitForOffboarding({
      client,
      view: running(),
      intervalMs: 1,
      sleep: async () => {},
      maxFailedReads: 2,
    });

    // Assess
    await expect(waiting).rejects.toThrow('ECONNRESET');
    expect(client.getOffboarding).toHaveBeenCalledTimes(3);
  });

  it('stops at once on an answer that will not change (a 404)', async () => {
    // Prepare
    const client = reads(
      new ApiError(404, 'OffboardingNotFound', 'tenant acme has no offboarding', ''),
      completed(),
    );

    // Act
    const waiting = waitForOffboarding({
      client,
      view: running(),
      intervalMs: 1,
      sleep: async () => {},
    });

    // Assess
    await expect(waiting).rejects.toThrow('tenant acme has no offboarding');
    expect(client.getOffboarding).toHaveBeenCalledTimes(1);
  });

  it('ends on Ctrl-C with the last offboarding read, and clears the status line', async () => {
    // Prepare
    const controller = new AbortController();
    const client = reads(running({ objectsDeleted: 7 }));
    const reporter = { update: vi.fn(), finish: vi.fn() };
    let sleeps = 0;
    const sleep = async (_ms: number, signal?: AbortSignal) => {
      if (++sleeps === 2) controller.abort();
      if (signal?.aborted) throw new Error('The operation was aborted');
    };

    // Act
    const error = await waitForOffboarding({
      client,
      view: anOffboarding(),
      intervalMs: 1_000,
      sleep,
      reporter,
      signal: controller.signal,
    }).catch((caught: unknown) => caught);

    // Assess
    expect(error).toBeInstanceOf(OffboardingWaitInterrupted);
    expect(error).toMatchObject({ view: { state: 'RUNNING', objectsDeleted: 7 } });
    expect(reporter.finish).toHaveBeenCalledTimes(1);
    expect(client.getOffboarding.mock.calls).toEqual([['acme', controller.signal]]);
  });

  it('does not wait for a read in flight to answer Ctrl-C', async () => {
    // Prepare
    const controller = new AbortController();
    const client = reads();
    client.getOffboarding.mockImplementation(() => {
      controller.abort();
      return new Promise(() => {});
    });

    // Act
    const waiting = waitForOffboarding({
      client,
      view: running(),
      intervalMs: 1_000,
      sleep: async () => {},
      signal: controller.signal,
    });

    // Assess
    await expect(waiting).rejects.toThrow(OffboardingWaitInterrupted);
  });
});

describe('Ctrl-C while waiting for an offboarding', () => {
  it('says the offboarding goes on and how to follow it', () => {
    expect(offboardingInterruptedMessage(running())).toBe(
      'lethe: the offboarding goes on: follow it with lethe tenants get acme\n',
    );
  });

  it('says how to cancel it too while it is SCHEDULED', () => {
    expect(offboardingInterruptedMessage(anOffboarding())).toBe(
      'lethe: the offboarding goes on: follow it with lethe tenants get acme\n' +
        'cancel it with lethe tenants cancel acme\n',
    );
  });
});

describe('the status line of an offboarding', () => {
  it('piped: a countdown while SCHEDULED, then its deletions, at every change of state', () => {
    // Prepare
    let clock = 0;
    const output = memoryOutput();
    const reporter = new OffboardingReporter({
      output,
      now: () => clock,
      wallNow: () => Date.parse(EXECUTE_AFTER) - 90_000 + clock,
    });

    // Act
    reporter.update(anOffboarding({ streams: 1, deletionStates: { SCHEDULED: 1 } }));
    clock = 1_000;
    reporter.update(anOffboarding());
    clock = 2_000;
    reporter.update(running({ objectsDeleted: 1_500 }));
    clock = 3_000;
    reporter.update({ ...completed(), objectsDeleted: 3_000 });
    reporter.finish();

    // Assess: the second countdown line is too soon after the first to be printed.
    expect(output.text()).toBe(
      [
        `lethe: SCHEDULED, starts in 1m 30s (at ${EXECUTE_AFTER}), 1 stream taken in, deletions 1 SCHEDULED, 0 objects deleted`,
        'lethe: RUNNING, 3 streams taken in, deletions 3 RUNNING, 1,500 objects deleted',
        `lethe: COMPLETED, 3 streams taken in, deletions 3 COMPLETED, 3,000 objects deleted, offboarding ${OFFBOARDING_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('piped: says at once that a SCHEDULED one has come due', () => {
    // Prepare
    let clock = 0;
    const output = memoryOutput();
    const reporter = new OffboardingReporter({
      output,
      now: () => clock,
      wallNow: () => Date.parse(EXECUTE_AFTER) - 2_000 + clock,
    });

    // Act
    reporter.update(anOffboarding());
    clock = 1_500;
    reporter.update(anOffboarding());

    // Assess
    expect(output.chunks).toEqual([
      `lethe: SCHEDULED, starts in 2s (at ${EXECUTE_AFTER}), 3 streams taken in, deletions 3 SCHEDULED, 0 objects deleted\n`,
      `lethe: SCHEDULED, starts any moment now (at ${EXECUTE_AFTER}), 3 streams taken in, deletions 3 SCHEDULED, 0 objects deleted\n`,
    ]);
  });

  it('on a TTY: one line redrawn in place, a bar while RUNNING, the final line kept', () => {
    // Prepare
    const output = memoryOutput({ isTTY: true, columns: 200 });
    const reporter = new OffboardingReporter({
      output,
      now: () => 0,
      wallNow: () => Date.parse(EXECUTE_AFTER) - 65_000,
    });

    // Act
    reporter.update(anOffboarding());
    reporter.update(running({ objectsDeleted: 10 }));
    reporter.update(anOffboarding({ state: 'CANCELLED', deletionStates: { CANCELLED: 3 } }));
    reporter.finish();

    // Assess
    expect(output.chunks).toEqual([
      `\rSCHEDULED, starts in 1m 05s (at ${EXECUTE_AFTER})  3 streams taken in  deletions 3 SCHEDULED  0 objects deleted\x1b[K`,
      '\r[███                 ]  RUNNING  3 streams taken in  deletions 3 RUNNING  10 objects deleted\x1b[K',
      `\rCANCELLED  3 streams taken in  deletions 3 CANCELLED  nothing was deleted  offboarding ${OFFBOARDING_ID}\x1b[K\n`,
    ]);
  });
});
