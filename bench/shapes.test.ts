import { describe, expect, it } from 'vitest';
import { medianRun, type ShapeRun } from './shapes.ts';

const run = (seconds: number): ShapeRun => ({
  shape: 'many',
  streams: 40,
  objectsPerStream: 30,
  partitions: 3,
  seconds,
  objectsPerSecond: 1200 / seconds,
});

describe('medianRun', () => {
  it("reports a shape's median seconds, its rate, and every run in the order taken", () => {
    const median = medianRun([run(2.4), run(1.2), run(1.5)]);
    expect(median.seconds).toBe(1.5);
    expect(median.objectsPerSecond).toBe(800);
    expect(median.runs).toEqual([2.4, 1.2, 1.5]);
    expect(median).toMatchObject({ shape: 'many', streams: 40, objectsPerStream: 30 });
  });

  it('takes the midpoint of an even number of runs, and refuses none', () => {
    expect(medianRun([run(1), run(3)]).seconds).toBe(2);
    expect(() => medianRun([])).toThrow(/at least one run/);
  });
});
