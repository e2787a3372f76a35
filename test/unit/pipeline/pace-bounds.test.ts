import { describe, expect, it } from 'vitest';
import { afterRefusal, type Paced, paceRise, paceWait } from '../../../lib/pipeline/pace.ts';

const PAGE = 1000;
/** DynamoDB's largest number (and the chain item's pace is one): 9.99...E+125. */
const DYNAMODB_MAX_NUMBER = 1e126;

describe('pace, kept within bounds', () => {
  it('stays a number DynamoDB can hold over a long chain S3 refused once and then always admitted', () => {
    // One refusal early on, then every page admitted: each completion adds the rise.
    let chain: Paced = { pace: afterRefusal({ objectsDeleted: 0 }, PAGE, 0).pace };
    for (let page = 0; page < 10_000; page++) {
      chain = { pace: (chain.pace ?? 0) + paceRise(chain) };
    }

    expect(Number.isFinite(chain.pace)).toBe(true);
    expect(chain.pace).toBeLessThan(DYNAMODB_MAX_NUMBER);
    expect(paceRise(chain)).toBe(0);
  });

  it('still rises while a page of the pace takes a millisecond or more', () => {
    expect(paceRise({ pace: 100_000 })).toBeGreaterThan(0);
  });

  it("starts a chain whose start another worker's clock put ahead at a pace, not NaN", () => {
    // The chain's start was written by a clock one second ahead of this worker's.
    const refusal = afterRefusal({ objectsDeleted: 0, startedAt: 1_000 }, PAGE, 0);

    expect(refusal.pace).toBe(PAGE / 2);
    expect(refusal.nextAt).toBe(2_000);
    expect(paceWait(refusal, 0)).toBe(2_000);
  });

  it('counts a chain started in the future as one that ran for no time, not faster', () => {
    const skewed = afterRefusal({ objectsDeleted: 3_000, startedAt: 500 }, PAGE, 0);
    const started = afterRefusal({ objectsDeleted: 3_000, startedAt: 0 }, PAGE, 0);

    expect(skewed.pace).toBe(started.pace);
  });
});
