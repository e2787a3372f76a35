/** The one source of time in Lethe: injected everywhere, so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that reads a fixed or moving `Date` from a function, for tests and benchmarks. */
export const clockOf = (now: () => Date): Clock => ({ now });

export const secondsBetween = (from: string, to: Date) =>
  Math.max(0, (to.getTime() - Date.parse(from)) / 1000);
