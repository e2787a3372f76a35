import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatDuration,
  ProgressReporter,
  RateMeter,
  renderBar,
  renderPlainLine,
  renderProgressLine,
} from '../../../lib/cli/progress.ts';
import { memoryOutput } from '../../helpers/cli.ts';
import { DELETION_ID } from '../../helpers/records.ts';

describe.each<[number, string]>([
  [0, '0s'],
  [1_499, '1s'],
  [59_000, '59s'],
  [61_000, '1m01s'],
  [3_600_000, '1h00m'],
  [5_430_000, '1h30m'],
])('formatDuration(%i)', (ms, text) => {
  it(`is ${text}`, () => expect(formatDuration(ms)).toBe(text));
});

describe.each<[number, string]>([
  [0, '0 B'],
  [1023, '1023 B'],
  [1536, '1.5 KiB'],
  [5 * 1024 ** 3, '5.0 GiB'],
])('formatBytes(%i)', (bytes, text) => {
  it(`is ${text}`, () => expect(formatBytes(bytes)).toBe(text));
});

describe('the bar', () => {
  it('fills in proportion to the share of objects deleted', () => {
    expect(renderBar(0.5, 0, 10)).toBe('[█████░░░░░]');
    expect(renderBar(1, 0, 10)).toBe('[██████████]');
    expect(renderBar(0, 0, 10)).toBe('[░░░░░░░░░░]');
  });

  it('bounces a block from end to end when the total is unknown', () => {
    // Act
    const frames = [0, 1, 7, 8, 14, 15].map((tick) => renderBar(undefined, tick, 10));

    // Assess
    expect(frames).toEqual([
      '[███       ]',
      '[ ███      ]',
      '[       ███]',
      '[      ███ ]',
      '[███       ]',
      '[ ███      ]',
    ]);
  });
});

describe('the rate', () => {
  it('is unknown from a single sample', () => {
    // Prepare
    const meter = new RateMeter();

    // Act
    meter.add(0, 100);

    // Assess
    expect(meter.perSecond()).toBeUndefined();
  });

  it('counts objects per second over the last window, so a stall brings it down', () => {
    // Prepare
    const meter = new RateMeter(10_000);
    meter.add(0, 0);
    meter.add(5_000, 5_000);
    meter.add(10_000, 10_000);
    expect(meter.perSecond()).toBe(1_000);

    // Act: nothing more deleted for 10 seconds
    meter.add(15_000, 10_000);
    meter.add(20_000, 10_000);

    // Assess
    expect(meter.perSecond()).toBe(0);
  });
});

describe('a progress line', () => {
  it('shows the share, count, rate and ETA when the total is known', () => {
    // Act
    const line = renderProgressLine(
      {
        snapshot: { state: 'RUNNING', objectsDeleted: 2_500, total: 10_000 },
        elapsedMs: 5_000,
        perSecond: 500,
      },
      0,
    );

    // Assess
    expect(line).toBe(
      '[█████░░░░░░░░░░░░░░░]  25%  RUNNING  2,500/10,000 objects deleted  500 objects/s  elapsed 5s  ETA 15s',
    );
  });

  it('shows no ETA when the total is unknown', () => {
    // Act
    const line = renderProgressLine(
      { snapshot: { state: 'RUNNING', objectsDeleted: 2_500 }, elapsedMs: 65_000, perSecond: 38.4 },
      2,
    );

    // Assess
    expect(line).toBe(
      '[  ███               ]  RUNNING  2,500 objects deleted  38 objects/s  elapsed 1m05s',
    );
  });

  it('shows no rate until one is known', () => {
    // Act
    const line = renderPlainLine({
      snapshot: { state: 'PENDING', objectsDeleted: 0, total: 10 },
      elapsedMs: 0,
      perSecond: undefined,
    });

    // Assess
    expect(line).toBe('lethe: PENDING, 0/10 objects deleted, elapsed 0s');
  });

  it('counts one object as one', () => {
    const line = (total?: number) =>
      renderPlainLine({
        snapshot: { state: 'COMPLETED', objectsDeleted: 1, ...(total ? { total } : {}) },
        elapsedMs: 0,
        perSecond: undefined,
      });

    expect(line()).toBe('lethe: COMPLETED, 1 object deleted, elapsed 0s');
    expect(line(1)).toBe('lethe: COMPLETED, 1/1 object deleted, elapsed 0s');
  });

  it('names the deletion once it has ended, and not before', () => {
    // Prepare
    const view = (state: string) => ({
      snapshot: { state, objectsDeleted: 3, deletionId: DELETION_ID },
      elapsedMs: 2_000,
      perSecond: 1.5,
    });

    // Act
    const running = renderPlainLine(view('RUNNING'));
    const ended = ['COMPLETED', 'FAILED', 'CANCELLED'].map((state) => renderPlainLine(view(state)));

    // Assess
    expect(running).toBe('lethe: RUNNING, 3 objects deleted, 2 objects/s, elapsed 2s');
    expect(ended).toEqual([
      `lethe: COMPLETED, 3 objects deleted, 2 objects/s, elapsed 2s, deletion ${DELETION_ID}`,
      `lethe: FAILED, 3 objects deleted, 2 objects/s, elapsed 2s, deletion ${DELETION_ID}`,
      `lethe: CANCELLED, nothing was deleted, deletion ${DELETION_ID}`,
    ]);
  });

  it('shows no ETA while the rate is zero', () => {
    // Act
    const line = renderPlainLine({
      snapshot: { state: 'RUNNING', objectsDeleted: 0, total: 10 },
      elapsedMs: 1_000,
      perSecond: 0,
    });

    // Assess
    expect(line).toBe('lethe: RUNNING, 0/10 objects deleted, 0 objects/s, elapsed 1s');
  });
});

describe('the reporter', () => {
  it('redraws one line in place on a TTY, with the rate from the fake clock', () => {
    // Prepare
    let now = 1_000;
    const output = memoryOutput({ isTTY: true, columns: 200 });
    const reporter = new ProgressReporter({ output, now: () => now });

    // Act
    reporter.update({ state: 'PENDING', objectsDeleted: 0 });
    now += 2_000;
    reporter.update({ state: 'RUNNING', objectsDeleted: 3_000 });
    reporter.finish();

    // Assess
    expect(output.chunks).toEqual([
      '\r[███                 ]  PENDING  0 objects deleted  elapsed 0s\x1b[K',
      '\r[ ███                ]  RUNNING  3,000 objects deleted  1,500 objects/s  elapsed 2s\x1b[K',
      '\r\x1b[K',
    ]);
  });

  it('cuts the line to the width of the terminal', () => {
    // Prepare
    const output = memoryOutput({ isTTY: true, columns: 31 });
    const reporter = new ProgressReporter({ output, now: () => 0 });

    // Act
    reporter.update({ state: 'RUNNING', objectsDeleted: 7 });

    // Assess
    expect(output.chunks).toEqual(['\r[███                 ]  RUNNIN\x1b[K']);
  });

  it('prints a plain line at most every interval when not a TTY, and at every change of state', () => {
    // Prepare
    let now = 0;
    const output = memoryOutput({ isTTY: false });
    const reporter = new ProgressReporter({ output, now: () => now, plainIntervalMs: 5_000 });

    // Act: one read a second
    reporter.update({ state: 'PENDING', objectsDeleted: 0 });
    for (const objectsDeleted of [0, 100, 200, 300, 400, 500, 600]) {
      now += 1_000;
      reporter.update({ state: 'RUNNING', objectsDeleted });
    }
    now += 1_000;
    reporter.update({ state: 'COMPLETED', objectsDeleted: 700 });
    reporter.finish();

    // Assess
    expect(output.text()).toBe(
      [
        'lethe: PENDING, 0 objects deleted, elapsed 0s',
        'lethe: RUNNING, 0 objects deleted, 0 objects/s, elapsed 1s',
        'lethe: RUNNING, 500 objects deleted, 83 objects/s, elapsed 6s',
        'lethe: COMPLETED, 700 objects deleted, 88 objects/s, elapsed 8s',
        '',
      ].join('\n'),
    );
  });
});

describe('the reporter of a deletion that ends', () => {
  it('leaves the final bar on a TTY, whole and naming the deletion, and clears nothing after it', () => {
    // Prepare
    let now = 0;
    const output = memoryOutput({ isTTY: true, columns: 40 });
    const reporter = new ProgressReporter({ output, now: () => now });

    // Act
    reporter.update({ state: 'RUNNING', objectsDeleted: 0, deletionId: DELETION_ID });
    now += 1_000;
    reporter.update({ state: 'COMPLETED', objectsDeleted: 10, deletionId: DELETION_ID });
    reporter.finish();

    // Assess
    expect(output.chunks).toEqual([
      '\r[███                 ]  RUNNING  0 obje\x1b[K',
      `\r[ ███                ]  COMPLETED  10 objects deleted  10 objects/s  elapsed 1s  deletion ${DELETION_ID}\x1b[K\n`,
    ]);
  });
});

describe('the countdown to a SCHEDULED deletion', () => {
  const executeAfter = '2026-03-02T12:00:00.000Z';
  const wallStart = Date.parse('2026-03-01T12:00:00.000Z');

  it('is one line redrawn on a TTY, then the bar, whose elapsed time starts with the deletion', () => {
    // Prepare
    let now = 0;
    const output = memoryOutput({ isTTY: true, columns: 200 });
    const reporter = new ProgressReporter({
      output,
      now: () => now,
      wallNow: () => wallStart + now,
    });

    // Act
    reporter.update({ state: 'SCHEDULED', objectsDeleted: 0, executeAfter });
    now += 61_000;
    reporter.update({ state: 'SCHEDULED', objectsDeleted: 0, executeAfter });
    now += 86_400_000;
    reporter.update({ state: 'PENDING', objectsDeleted: 0, executeAfter });
    now += 2_000;
    reporter.update({ state: 'RUNNING', objectsDeleted: 100, executeAfter });
    reporter.finish();

    // Assess
    expect(output.chunks).toEqual([
      `\rSCHEDULED, starts in 1d 00h (at ${executeAfter})\x1b[K`,
      `\rSCHEDULED, starts in 23h 58m (at ${executeAfter})\x1b[K`,
      '\r[███                 ]  PENDING  0 objects deleted  elapsed 0s\x1b[K',
      '\r[ ███                ]  RUNNING  100 objects deleted  50 objects/s  elapsed 2s\x1b[K',
      '\r\x1b[K',
    ]);
  });

  it('is a line every interval when not a TTY, and says when the start is due', () => {
    // Prepare
    let now = 0;
    const output = memoryOutput({ isTTY: false });
    const reporter = new ProgressReporter({
      output,
      now: () => now,
      wallNow: () => Date.parse(executeAfter) - 12_000 + now,
      plainIntervalMs: 5_000,
    });

    // Act: a tick a second, for 14 seconds
    for (let tick = 0; tick < 15; tick++) {
      reporter.update({ state: 'SCHEDULED', objectsDeleted: 0, executeAfter });
      now += 1_000;
    }

    // Assess
    expect(output.text()).toBe(
      [
        `lethe: SCHEDULED, starts in 12s (at ${executeAfter})`,
        `lethe: SCHEDULED, starts in 7s (at ${executeAfter})`,
        `lethe: SCHEDULED, starts in 2s (at ${executeAfter})`,
        `lethe: SCHEDULED, starts any moment now (at ${executeAfter})`,
        '',
      ].join('\n'),
    );
  });
});
