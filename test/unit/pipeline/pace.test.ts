import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterRefusal,
  nextSlot,
  PACE,
  type Paced,
  paceRise,
  paceWait,
} from '../../../lib/pipeline/pace.ts';

const PAGE = 1000;

describe('pace', () => {
  it('keeps an unpaced chain unpaced: no wait, no slot, no rise', () => {
    expect(paceWait({}, 5)).toBe(0);
    expect(nextSlot({}, PAGE, 5)).toBeUndefined();
    expect(paceRise({})).toBe(0);
  });

  it('starts a chain refused before it deleted anything at half a page a second', () => {
    const refusal = afterRefusal({ objectsDeleted: 0, startedAt: 0 }, PAGE, 200);

    // Back half a second before its slot: SQS delays are whole seconds.
    expect(refusal).toEqual({ pace: 500, retrySeconds: 1, nextAt: 200 + 2000 });
  });

  it('starts a young chain at what it deleted over the time it ran and a burst more', () => {
    // A page in 0.2 s: 1,000 keys over 1.2 s.
    const refusal = afterRefusal({ objectsDeleted: 1000, startedAt: 0 }, PAGE, 200);

    expect(refusal.pace).toBeCloseTo(1000 / 1.2);
  });

  it('starts a chain at the rate it kept, counting a burst more time', () => {
    // 44,000 keys in 10 s, and a second more: 4,000 keys a second.
    const refusal = afterRefusal({ objectsDeleted: 44_000, startedAt: 0 }, PAGE, 10_000);

    expect(refusal.pace).toBe(4000);
    expect(refusal.ceiling).toBeUndefined();
  });

  it('cuts a paced chain just under the pace S3 last admitted, remembers the one it refused, and then rises slowly', () => {
    const first = afterRefusal({ pace: 2205, objectsDeleted: 0 }, PAGE, 0);
    const refusal = afterRefusal({ pace: 2001, ceiling: 2500, objectsDeleted: 0 }, PAGE, 0);

    // Ramping up, the refused page went at the pace one rise (5%) down, 2,100 keys a second,
    // after one admitted at 2,000: the chain goes on just under that.
    expect(first.ceiling).toBeCloseTo(2100);
    expect(first.pace).toBeCloseTo(2000 * PACE.firstCut);
    // Probing, the two paces are a small rise apart: the cut is a little deeper.
    expect(refusal.ceiling).toBeCloseTo(2001 / (1 + PACE.probe));
    expect(refusal.pace).toBeCloseTo((2001 / (1 + PACE.probe) ** 2) * PACE.cut);
    // A page at about 1,940 keys a second is 0.52 s: sent back at once, the rest slept out.
    expect(refusal.retrySeconds).toBe(0);
    expect(refusal.nextAt).toBeCloseTo((1000 * 1000) / refusal.pace);
    expect(paceRise(refusal)).toBeCloseTo(refusal.pace * PACE.probe);
    expect(paceRise({ pace: 2000 })).toBeCloseTo(2000 * PACE.rampUp);
  });

  it('waits for the slot of a paced chain, and spaces pages by their keys over the pace', () => {
    const chain: Paced = { pace: 500, nextAt: 10_000 };

    expect(paceWait(chain, 9_000)).toBe(1000);
    expect(paceWait(chain, 11_000)).toBe(0);
    // A slot in the past does not bank time: the next one counts from now.
    expect(nextSlot(chain, 250, 12_000)).toBe(12_500);
    expect(nextSlot(chain, 250, 9_000)).toBe(10_500);
  });

  it('always cuts on a refusal, and sends the refused page back for the next slot', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        fc.integer({ min: 1, max: 1000 }),
        (pace, pageSize) => {
          const refusal = afterRefusal({ pace, objectsDeleted: 0 }, pageSize, 0);
          expect(refusal.pace).toBeLessThan(pace);
          expect(Number.isInteger(refusal.retrySeconds)).toBe(true);
          expect(refusal.retrySeconds * 1000).toBeLessThanOrEqual(refusal.nextAt);
          expect(refusal.nextAt).toBeCloseTo((pageSize * 1000) / refusal.pace);
        },
      ),
    );
  });

  /**
   * One chain against one prefix partition that admits `limit` keys a second (a token bucket
   * holding a second's worth), in simulated time: pages are listed when the pace allows and
   * S3 refuses a page when the bucket holds less than a page.
   */
  function simulate(limit: number, pageSize: number, pages: number) {
    let chain: Paced & { objectsDeleted: number; startedAt: number } = {
      objectsDeleted: 0,
      startedAt: 0,
    };
    const capacity = Math.max(limit, pageSize);
    let level = capacity;
    let filledAt = 0;
    let now = 0;
    let refused = 0;
    for (let page = 0; page < pages; ) {
      now += paceWait(chain, now) + 50; // the listing and the request take 50 ms
      level = Math.min(capacity, level + ((now - filledAt) * limit) / 1000);
      filledAt = now;
      const nextAt = nextSlot(chain, pageSize, now);
      if (level >= pageSize) {
        level -= pageSize;
        page++;
        chain = {
          ...chain,
          ...(nextAt !== undefined ? { nextAt } : {}),
          objectsDeleted: chain.objectsDeleted + pageSize,
          ...(chain.pace !== undefined ? { pace: chain.pace + paceRise(chain) } : {}),
        };
      } else {
        refused++;
        const refusal = afterRefusal(chain, pageSize, now);
        chain = { ...chain, ...refusal };
      }
    }
    return {
      share: refused / (pages + refused),
      ofLimit: (pages * pageSize) / (now / 1000) / limit,
    };
  }

  it.each([
    [100, 100],
    [150, 100],
    [230, 100],
    [3500, 1000],
  ])(
    'settles just under a limit of %i keys a second (pages of %i), meeting it rarely',
    (limit, pageSize) => {
      const { share, ofLimit } = simulate(limit, pageSize, 400);

      expect(share).toBeLessThanOrEqual(0.05);
      expect(ofLimit).toBeGreaterThanOrEqual(0.85);
      expect(ofLimit).toBeLessThanOrEqual(1.05);
    },
  );
});
