import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deletionLayoutOf, estimateDeletion, PRICES, RATES } from '../../../lib/core/index.ts';
import { chainsOver } from '../../../lib/pipeline/chain-layout.ts';

describe('estimateDeletion', () => {
  it('counts the requests of a deletion of one million objects in 100 partitions', () => {
    // Act
    const estimate = estimateDeletion({
      entries: 1_000_000,
      pages: 1_000,
      chains: 100,
      multipartUploads: 3,
      workerConcurrency: 20,
    });

    // Assess: a list and a DeleteObjects per page, the dispatch and verification listings,
    // one abort per upload; one message per page and one to finalize.
    expect(estimate.s3Requests).toBe(1_000 + 1 + 2 + 1_000 + 3);
    expect(estimate.sqsMessages).toBe(1_001);
    expect(estimate.dynamodbWrites).toBe(1_000 * 2 + 100 * 5 + 8);
    expect(estimate.lambdaGbSeconds).toBeCloseTo(
      1_000 * RATES.secondsPerPage * RATES.workerMemoryGb,
      3,
    );
    // 20 workers at half a second a page.
    expect(estimate.seconds).toBe(Math.ceil((1_000 * 0.5) / 20 + 1));
    const dollars =
      2_003 * PRICES.s3ListOrPostRequest +
      1_001 * 3 * PRICES.sqsRequest +
      2_508 * PRICES.dynamodbWriteUnit +
      estimate.lambdaGbSeconds * PRICES.lambdaGbSecond +
      1_002 * PRICES.lambdaRequest;
    expect(estimate.costUsd).toBeCloseTo(dollars, 6);
  });

  it("is bound by S3's per-prefix rate when one chain holds everything", () => {
    // Act: 7 million keys behind one prefix, many workers
    const estimate = estimateDeletion({
      entries: 7_000_000,
      pages: 7_000,
      chains: 1,
      multipartUploads: 0,
      workerConcurrency: 1_000,
    });

    // Assess: 3,500 deletes a second, not the workers, decide.
    expect(estimate.seconds).toBe(Math.ceil(7_000_000 / 3_500 + 1));
  });

  it("is bound by the bucket's key budget when it is below what the workers and S3 allow", () => {
    // Act: the one-million-object deletion above, at 500 keys a second, and with no budget
    const input = { entries: 1_000_000, pages: 1_000, chains: 100, multipartUploads: 0 };
    const budgeted = estimateDeletion({ ...input, workerConcurrency: 20, maxKeysPerSecond: 500 });
    const free = estimateDeletion({ ...input, workerConcurrency: 20, maxKeysPerSecond: 0 });

    // Assess
    expect(budgeted.seconds).toBe(Math.ceil(1_000_000 / 500 + 1));
    expect(free.seconds).toBe(Math.ceil((1_000 * 0.5) / 20 + 1));
  });

  it('estimates an empty location at a second and a few requests', () => {
    const estimate = estimateDeletion({
      entries: 0,
      pages: 0,
      chains: 0,
      multipartUploads: 0,
      workerConcurrency: 20,
    });
    expect(estimate).toMatchObject({ s3Requests: 3, sqsMessages: 1, seconds: 1 });
  });

  it('never costs less, nor takes less time, for more objects', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 200 }),
        (a, b, chains) => {
          const [small, large] = a <= b ? [a, b] : [b, a];
          const of = (entries: number) =>
            estimateDeletion({
              entries,
              pages: Math.ceil(entries / 1000),
              chains,
              multipartUploads: 0,
              workerConcurrency: 20,
            });
          expect(of(large).costUsd).toBeGreaterThanOrEqual(of(small).costUsd);
          expect(of(large).seconds).toBeGreaterThanOrEqual(of(small).seconds);
        },
      ),
    );
  });
});

describe('deletionLayoutOf (the deletion a plan previews, from what the plan counted)', () => {
  // A plan counts a chain per child prefix, each at least a page.
  const counted = (children: number, perChild: number, pageSize = 1000) => ({
    pages: children * Math.max(1, Math.ceil(perChild / pageSize)),
    chains: children,
    entries: children * perChild,
  });

  it('takes a year of small daily partitions in runs of about a page, as the dispatcher lays them out', () => {
    // Prepare: 365 partitions of 10 keys, and the layout the dispatcher makes of them
    const location = 'streams/acme/logs/1/';
    const days = Array.from(
      { length: 365 },
      (_, day) => `${location}dt=${String(day).padStart(4, '0')}/`,
    );
    const sample = days
      .flatMap((prefix) =>
        Array.from({ length: 10 }, (_, n) => ({ key: `${prefix}${n}.json`, size: 1 })),
      )
      .slice(0, 1000);
    const dispatched = chainsOver(location, days, sample, 1000);

    // Act
    const layout = deletionLayoutOf(counted(365, 10), 1000);

    // Assess: 5 chains of a page each, where the plan counted 365 of each
    expect(dispatched).toHaveLength(5);
    expect(layout).toEqual({ pages: 5, chains: 5 });
  });

  it("keeps the plan's pages where children fill pages (10 partitions of 2,000)", () => {
    expect(deletionLayoutOf(counted(10, 2000), 1000)).toEqual({ pages: 20, chains: 10 });
  });

  it('is one chain of one page for a location that lists in one page', () => {
    expect(deletionLayoutOf(counted(3, 300), 1000)).toEqual({ pages: 1, chains: 1 });
    expect(deletionLayoutOf(counted(2, 1), 1000)).toEqual({ pages: 1, chains: 1 });
  });

  it('is nothing for an empty location', () => {
    expect(deletionLayoutOf({ pages: 0, chains: 0, entries: 0 }, 1000)).toEqual({
      pages: 0,
      chains: 0,
    });
  });

  it('never has more pages than the plan counted, nor fewer than the entries fill', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 1000 }),
        (children, perChild, pageSize) => {
          const plan = counted(children, perChild, pageSize);
          const { pages, chains } = deletionLayoutOf(plan, pageSize);
          expect(pages).toBeLessThanOrEqual(plan.pages);
          expect(pages).toBeGreaterThanOrEqual(Math.ceil(plan.entries / pageSize));
          expect(chains).toBeGreaterThanOrEqual(1);
          expect(chains).toBeLessThanOrEqual(Math.min(pages, plan.chains));
        },
      ),
    );
  });
});
