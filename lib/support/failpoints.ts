/**
 * Failpoints: named places in the pipeline where a test makes the process crash or a step
 * fail, like Neon's failpoints. Off by default and free when off (one Map size check). Armed
 * from a test with `armFailpoint`, or for a whole local runtime with `LETHE_FAILPOINTS`, e.g.
 * `LETHE_FAILPOINTS=worker.after-delete=crash` or `dispatcher.before-enqueue=error*2`.
 */
export const FAILPOINTS = [
  'api.after-tombstone',
  'dispatcher.before-enqueue',
  'dispatcher.after-enqueue',
  'worker.after-list',
  'worker.before-next-page',
  'worker.after-delete',
  'finalize.before-verify',
  'finalize.after-verify',
  'sweeper.after-claim',
  'sweeper.after-begin',
] as const;

export type FailpointName = (typeof FAILPOINTS)[number];

/** `error` throws (the invocation fails and is retried); `crash` kills the process outright. */
export type FailpointAction = 'error' | 'crash';

export class FailpointError extends Error {
  override readonly name = 'FailpointError';
  constructor(readonly failpoint: FailpointName) {
    super(`failpoint ${failpoint} fired`);
  }
}

const armed = new Map<FailpointName, { action: FailpointAction; remaining: number }>();
const fired = new Map<FailpointName, number>();

export function armFailpoint(name: FailpointName, action: FailpointAction, times = 1) {
  armed.set(name, { action, remaining: times });
}

export function disarmFailpoints() {
  armed.clear();
  fired.clear();
}

/** How many times a failpoint fired since it was last disarmed. */
export const firedCount = (name: FailpointName) => fired.get(name) ?? 0;

/** Arms failpoints from a specification like `a=crash,b=error*3`. */
export function armFromSpec(spec: string | undefined) {
  for (const entry of (spec ?? '').split(',').map((part) => part.trim())) {
    if (!entry) continue;
    const match = /^([a-z.-]+)=(error|crash)(?:\*(\d+))?$/.exec(entry);
    const name = match?.[1] as FailpointName | undefined;
    if (!match || !name || !FAILPOINTS.includes(name)) {
      throw new Error(
        `bad failpoint "${entry}": use name=error|crash[*times], names: ${FAILPOINTS.join(', ')}`,
      );
    }
    armFailpoint(name, match[2] as FailpointAction, Number(match[3] ?? 1));
  }
}

/** Marks a failpoint in the code path; does nothing unless a test armed it. */
export function failpoint(name: FailpointName): void {
  if (armed.size === 0) return;
  const point = armed.get(name);
  if (!point) return;
  if (--point.remaining <= 0) armed.delete(name);
  fired.set(name, (fired.get(name) ?? 0) + 1);
  if (point.action === 'crash') {
    process.kill(process.pid, 'SIGKILL');
  }
  throw new FailpointError(name);
}
