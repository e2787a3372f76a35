import { isDue, renderCountdown } from './countdown.ts';
import { type Output, StatusLine } from './status-line.ts';

export type { Output } from './status-line.ts';

export interface ProgressSnapshot {
  readonly state: string;
  readonly objectsDeleted: number;
  /** Objects to delete in all, when the API reports it; without it there is no ETA. */
  readonly total?: number | undefined;
  /** Named on the final line. */
  readonly deletionId?: string | undefined;
  /** When a SCHEDULED deletion starts: shown as a countdown until then. */
  readonly executeAfter?: string | undefined;
}

/** The states a deletion ends in: its receipt no longer changes. */
const ENDED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

export const formatCount = (value: number) => Math.round(value).toLocaleString('en-US');

/** `1 day`, `30 days`, with the count as the progress lines print it. */
export const plural = (count: number, noun: string) =>
  `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Objects per second over a sliding window of samples, so a stall shows as a falling rate. */
export class RateMeter {
  readonly #windowMs: number;
  readonly #samples: Array<{ at: number; count: number }> = [];

  constructor(windowMs = 10_000) {
    this.#windowMs = windowMs;
  }

  add(at: number, count: number): void {
    this.#samples.push({ at, count });
    // Keep one sample at or before the window's start, so the window is always covered.
    while (this.#samples.length > 2 && (this.#samples[1]?.at ?? at) <= at - this.#windowMs) {
      this.#samples.shift();
    }
  }

  /** undefined until two samples some time apart exist. */
  perSecond(): number | undefined {
    const first = this.#samples[0];
    const last = this.#samples.at(-1);
    if (!first || !last || last.at <= first.at) return undefined;
    return ((last.count - first.count) * 1000) / (last.at - first.at);
  }
}

export const BAR_WIDTH = 20;

/** A filling bar when the total is known, otherwise a block bouncing with each redraw. */
export function renderBar(fraction: number | undefined, tick: number, width = BAR_WIDTH): string {
  if (fraction !== undefined) {
    const filled = Math.min(width, Math.max(0, Math.floor(fraction * width)));
    return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
  }
  const block = 3;
  const span = width - block;
  const step = tick % (2 * span);
  const offset = step <= span ? step : 2 * span - step;
  return `[${' '.repeat(offset)}${'█'.repeat(block)}${' '.repeat(span - offset)}]`;
}

export interface ProgressView {
  readonly snapshot: ProgressSnapshot;
  readonly elapsedMs: number;
  readonly perSecond: number | undefined;
}

/**
 * The parts every progress line shows: count, rate (once known), elapsed, ETA (only with a
 * total and a rate), and the deletion once it has ended.
 */
function parts({ snapshot, elapsedMs, perSecond }: ProgressView): string[] {
  const { objectsDeleted, total } = snapshot;
  const count =
    total === undefined
      ? `${plural(objectsDeleted, 'object')} deleted`
      : `${formatCount(objectsDeleted)}/${plural(total, 'object')} deleted`;
  const named = snapshot.deletionId ? [`deletion ${snapshot.deletionId}`] : [];
  // Cancelled in its grace window: there never was anything to count.
  if (snapshot.state === 'CANCELLED') return [snapshot.state, 'nothing was deleted', ...named];
  const shown = [snapshot.state, count];
  if (perSecond !== undefined) shown.push(`${formatCount(perSecond)} objects/s`);
  shown.push(`elapsed ${formatDuration(elapsedMs)}`);
  if (total !== undefined && perSecond !== undefined && perSecond > 0) {
    shown.push(`ETA ${formatDuration((Math.max(0, total - objectsDeleted) / perSecond) * 1000)}`);
  }
  return ENDED.has(snapshot.state) ? [...shown, ...named] : shown;
}

export function renderProgressLine(view: ProgressView, tick: number): string {
  const { objectsDeleted, total } = view.snapshot;
  const fraction = total ? Math.min(1, objectsDeleted / total) : undefined;
  const percent =
    fraction === undefined ? '' : ` ${String(Math.floor(fraction * 100)).padStart(3)}%`;
  return `${renderBar(fraction, tick)}${percent}  ${parts(view).join('  ')}`;
}

export const renderPlainLine = (view: ProgressView) => `lethe: ${parts(view).join(', ')}`;

export interface ProgressReporterOptions {
  readonly output: Output;
  /** Milliseconds since some fixed point. */
  readonly now: () => number;
  /** Milliseconds since the epoch, for the countdown to a SCHEDULED deletion. @default now */
  readonly wallNow?: () => number;
  /** Least time between two lines when the output is not a TTY. @default 5000 */
  readonly plainIntervalMs?: number;
}

/**
 * Shows a deletion's progress: redrawn in place on a TTY, a line now and then elsewhere. A
 * SCHEDULED deletion shows a countdown to its start instead, and the progress (its elapsed
 * time, its rate) starts when the deletion does. The final line stays, naming the deletion.
 */
export class ProgressReporter {
  readonly #line: StatusLine;
  readonly #now: () => number;
  readonly #wallNow: () => number;
  #meter = new RateMeter();
  #startedAt: number;
  #counting = true;
  #tick = 0;

  constructor(options: ProgressReporterOptions) {
    this.#line = new StatusLine(options.output, options.plainIntervalMs);
    this.#now = options.now;
    this.#wallNow = options.wallNow ?? options.now;
    this.#startedAt = options.now();
  }

  update(snapshot: ProgressSnapshot): void {
    const at = this.#now();
    if (snapshot.state === 'SCHEDULED' && snapshot.executeAfter) {
      this.#counting = true;
      const wallNow = this.#wallNow();
      // Coming due is a change of its own: a log says so at once.
      const phase = isDue(snapshot.executeAfter, wallNow) ? 'SCHEDULED, due' : 'SCHEDULED';
      this.#line.show(phase, at, renderCountdown(snapshot.executeAfter, wallNow));
      return;
    }
    if (this.#counting) this.#start(at);
    this.#meter.add(at, snapshot.objectsDeleted);
    const view = { snapshot, elapsedMs: at - this.#startedAt, perSecond: this.#meter.perSecond() };
    if (!this.#line.isTTY) {
      this.#line.show(snapshot.state, at, parts(view).join(', '));
    } else if (ENDED.has(snapshot.state)) {
      // The final line is written whole, once, and stays.
      this.#line.end(renderProgressLine(view, this.#tick++));
    } else {
      this.#line.show(snapshot.state, at, renderProgressLine(view, this.#tick++));
    }
  }

  /** Clears a bar left drawn, so what follows starts on a clean line. */
  finish(): void {
    this.#line.clear();
  }

  /** The deletion has started (or started again after a countdown): the clock starts now. */
  #start(at: number): void {
    this.#counting = false;
    this.#startedAt = at;
    this.#meter = new RateMeter();
  }
}
