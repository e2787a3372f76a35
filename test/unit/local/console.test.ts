import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { stateChangeLine } from '../../../lib/local/console.ts';

const ID = '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';

/** A stream record of a deletion item moving from `before` to `after` (its state and counts). */
const change = (before: Record<string, unknown> | undefined, after: Record<string, unknown>) => {
  const item = (fields: Record<string, unknown>) =>
    marshall({ type: 'DELETION', deletionId: ID, tenant: 'acme', stream: 'logs', ...fields });
  return {
    dynamodb: { NewImage: item(after), ...(before ? { OldImage: item(before) } : {}) },
  } as unknown as DynamoDBRecord;
};

describe('stateChangeLine', () => {
  it('counts chains, objects and keys in words that agree with the count', () => {
    const started = (chainsTotal: number) =>
      stateChangeLine(change({ state: 'PENDING' }, { state: 'RUNNING', round: 1, chainsTotal }));
    const completed = (objectsDeleted: number) =>
      stateChangeLine(change({ state: 'RUNNING' }, { state: 'COMPLETED', objectsDeleted }));
    const failed = (failedObjects: number) =>
      stateChangeLine(change({ state: 'RUNNING' }, { state: 'FAILED', failedObjects }));

    expect(started(1)).toBe(`deletion ${ID} of acme/logs: PENDING -> RUNNING (round 1, 1 chain)`);
    expect(started(10)).toMatch(/\(round 1, 10 chains\)$/);
    expect(completed(1)).toMatch(
      /: RUNNING -> COMPLETED \(1 object deleted, location verified empty\)$/,
    );
    expect(completed(20_000)).toMatch(/\(20,000 objects deleted, location verified empty\)$/);
    expect(failed(1)).toMatch(/: RUNNING -> FAILED \(1 key failed\)$/);
    expect(failed(3)).toMatch(/\(3 keys failed\)$/);
  });

  it('says a partition deletion emptied its partitions, not the location', () => {
    const line = stateChangeLine(
      change(
        { state: 'RUNNING', before: '2026-11-01' },
        { state: 'COMPLETED', objectsDeleted: 12, before: '2026-11-01' },
      ),
    );

    expect(line).toBe(
      `deletion ${ID} of acme/logs partitions before 2026-11-01: RUNNING -> COMPLETED (12 objects deleted, those partitions verified empty)`,
    );
  });

  it('prints nothing for a write that kept the state, or for an item that is not a deletion', () => {
    expect(stateChangeLine(change({ state: 'RUNNING' }, { state: 'RUNNING' }))).toBeUndefined();
    const stream = {
      dynamodb: { NewImage: marshall({ type: 'STREAM', state: 'DELETING' }) },
    } as unknown as DynamoDBRecord;
    expect(stateChangeLine(stream)).toBeUndefined();
  });
});
