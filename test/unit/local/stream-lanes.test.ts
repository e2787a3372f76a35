import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { laneOf, lanesFor, ShardLanes } from '../../../lib/local/stream-lanes.ts';

/** A stream record of the item (`pk`, `sk`), numbered by `sequence`. */
const recordOf = (pk: string, sk: string, sequence: number): DynamoDBRecord => ({
  eventID: `e${sequence}`,
  dynamodb: {
    Keys: { pk: { S: pk }, sk: { S: sk } },
    SequenceNumber: String(sequence),
  },
});

const itemOf = (record: DynamoDBRecord) =>
  `${record.dynamodb?.Keys?.pk?.S}/${record.dynamodb?.Keys?.sk?.S}`;

/** A deliverer that records its batches and ends each only when told to. */
function gated() {
  const batches: DynamoDBRecord[][] = [];
  const open: Array<() => void> = [];
  const deliver = (records: DynamoDBRecord[]) =>
    new Promise<void>((resolve) => {
      batches.push(records);
      open.push(resolve);
    });
  const endAll = () => {
    for (const end of open.splice(0)) end();
  };
  return { batches, deliver, endAll };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ShardLanes: concurrent batches of one shard, in order per item', () => {
  it("delivers another item's records while one item's batch is still in flight", async () => {
    // Arrange: two items that fall in different lanes
    const gate = gated();
    const lanes = new ShardLanes({
      count: 10,
      batchSize: 100,
      deliver: gate.deliver,
      active: () => true,
    });
    const first = recordOf('TENANT#acme', 'DELETION#a', 1);
    const later = ['b', 'c', 'd', 'e']
      .map((id, index) => recordOf('TENANT#acme', `DELETION#${id}`, index + 2))
      .find((record) => laneOf(record, 10) !== laneOf(first, 10)) as DynamoDBRecord;

    // Act: the first item's batch never ends; the other item's record comes afterwards
    lanes.add([first]);
    await tick();
    lanes.add([later]);
    await tick();

    // Assess
    expect(gate.batches).toEqual([[first], [later]]);
    gate.endAll();
    await lanes.settled();
  });

  it("never has two batches of one item in flight, and delivers an item's records in order", async () => {
    // Arrange
    const gate = gated();
    const lanes = new ShardLanes({
      count: 4,
      batchSize: 2,
      deliver: gate.deliver,
      active: () => true,
    });
    const records = [1, 2, 3, 4, 5].map((n) => recordOf('TENANT#acme', 'DELETION#a', n));

    // Act
    lanes.add(records.slice(0, 1));
    await tick();
    lanes.add(records.slice(1));
    await tick();
    const inFlight = gate.batches.length;
    for (let round = 0; round < 5; round++) {
      gate.endAll();
      await tick();
    }
    await lanes.settled();

    // Assess: one batch at a time, then the rest in batches of at most two
    expect(inFlight).toBe(1);
    expect(gate.batches).toEqual([records.slice(0, 1), records.slice(1, 3), records.slice(3)]);
  });

  it('delivers no further batch once the poller stops, and settles', async () => {
    // Arrange
    let active = true;
    const gate = gated();
    const lanes = new ShardLanes({
      count: 1,
      batchSize: 1,
      deliver: gate.deliver,
      active: () => active,
    });
    lanes.add([recordOf('p', 'a', 1), recordOf('p', 'a', 2)]);
    await tick();

    // Act
    active = false;
    gate.endAll();
    await lanes.settled();

    // Assess
    expect(gate.batches).toHaveLength(1);
    expect(lanes.waiting).toBe(1);
  });

  it('delivers a batch again, first, when its delivery threw, and says so', async () => {
    // Arrange: the first delivery fails as an unreachable on-failure queue would
    const delivered: DynamoDBRecord[][] = [];
    const logged: string[] = [];
    let calls = 0;
    const lanes = new ShardLanes({
      count: 1,
      batchSize: 1,
      deliver: async (batch) => {
        if (calls++ === 0) throw new Error('queue unreachable');
        delivered.push(batch);
      },
      active: () => true,
      log: (message) => logged.push(message),
    });
    const records = [recordOf('p', 'a', 1), recordOf('p', 'a', 2)];

    // Act
    lanes.add(records);
    await vi.waitFor(() => expect(delivered).toHaveLength(2));
    await lanes.settled();

    // Assess
    expect(delivered).toEqual([[records[0]], [records[1]]]);
    expect(logged).toEqual(['stream lane: queue unreachable']);
  });

  it('is full when every lane has a batch waiting', () => {
    // Arrange
    const lanes = new ShardLanes({
      count: 2,
      batchSize: 2,
      deliver: async () => {},
      active: () => false,
    });

    // Act
    lanes.add([recordOf('p', 'a', 1), recordOf('p', 'b', 2), recordOf('p', 'c', 3)]);
    const three = lanes.full;
    lanes.add([recordOf('p', 'd', 4)]);

    // Assess
    expect(three).toBe(false);
    expect(lanes.full).toBe(true);
  });

  it('takes no lanes for an event source without a parallelization factor above 1', () => {
    // Act
    const none = lanesFor(
      { batchSize: 10 },
      async () => {},
      () => true,
    );
    const one = lanesFor(
      { batchSize: 10, parallelizationFactor: 1 },
      async () => {},
      () => true,
    );
    const ten = lanesFor(
      { batchSize: 10, parallelizationFactor: 10 },
      async () => {},
      () => true,
    );

    // Assess
    expect([none, one]).toEqual([undefined, undefined]);
    expect(ten).toBeInstanceOf(ShardLanes);
  });

  it('delivers every record once, each item in stream order, whatever the arrivals (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 3 })), {
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        async (arrivals, count, batchSize) => {
          // Arrange: items 0..5, records arriving in up to four polls
          const records = arrivals.map(([item], index) => recordOf('p', `s${item}`, index));
          const delivered: DynamoDBRecord[] = [];
          const lanes = new ShardLanes({
            count,
            batchSize,
            deliver: async (batch) => {
              await tick();
              delivered.push(...batch);
            },
            active: () => true,
          });

          // Act
          for (let poll = 0; poll < 4; poll++) {
            lanes.add(records.filter((_, index) => (arrivals[index]?.[1] ?? 0) === poll));
            await tick();
          }
          await lanes.settled();

          // Assess
          expect(delivered).toHaveLength(records.length);
          const order = (all: DynamoDBRecord[], item: string) =>
            all.filter((record) => itemOf(record) === item).map((record) => record.eventID);
          for (const item of new Set(records.map(itemOf))) {
            const arrived = [0, 1, 2, 3].flatMap((poll) =>
              records.filter(
                (record, index) => itemOf(record) === item && arrivals[index]?.[1] === poll,
              ),
            );
            expect(order(delivered, item)).toEqual(order(arrived, item));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
