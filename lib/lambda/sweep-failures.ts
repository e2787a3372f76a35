import { count, type ScopedLog } from '../observability/index.ts';
import type { SweepFailure } from '../pipeline/index.ts';
import { errorText } from './boot.ts';

const summary = ({ step, keys, error }: SweepFailure) => {
  const item = Object.values(keys).join('/');
  return `${step}${item ? ` ${item}` : ''}: ${errorText(error)}`;
};

/**
 * Thrown at the end of a sweep that could not handle every item, once everything else was
 * done: the invocation fails, so the function's errors (and `SweeperAlarm`) see it.
 */
export class SweepFailedError extends Error {
  override readonly name = 'SweepFailedError';

  constructor(
    readonly failures: number,
    first: SweepFailure,
  ) {
    const items = `${failures} item${failures === 1 ? '' : 's'}`;
    super(
      `the sweep could not handle ${items} (logged as "sweep item failed"); the first: ${summary(first)}`,
      { cause: first.error },
    );
  }
}

/**
 * The failures of one sweep. Each item (or part) that threw is logged with its keys and the
 * error, and counted (`SweepItemsFailed`), and the sweep goes on; `settle` fails the sweep at
 * its end when anything failed, so a failure is never a silent success.
 */
export class SweepFailures {
  readonly #log: ScopedLog;
  #count = 0;
  #first: SweepFailure | undefined;

  constructor(log: ScopedLog) {
    this.#log = log;
  }

  /** Records one failure: a log line and the metric. */
  readonly failed = (failure: SweepFailure): void => {
    this.#count++;
    this.#first ??= failure;
    count('sweepItemsFailed', 1);
    const { step, keys, error } = failure;
    this.#log.error('sweep item failed', { step, ...keys, error });
  };

  /** How many failed so far. */
  get count(): number {
    return this.#count;
  }

  /** Runs one part of the sweep: one that throws is recorded, and answers nothing. */
  async part<T>(step: string, run: () => Promise<T>): Promise<{ value: T } | undefined> {
    try {
      return { value: await run() };
    } catch (error) {
      this.failed({ step, keys: {}, error });
      return undefined;
    }
  }

  /** The sweep's outcome: `value`, or, when anything failed, a SweepFailedError. */
  settle<T>(value: T | undefined): T {
    if (this.#first) throw new SweepFailedError(this.#count, this.#first);
    // Only a part that failed answers nothing, and it was recorded.
    if (value === undefined) throw new Error('the sweep answered nothing');
    return value;
  }
}
