import {
  type ChainRecord,
  type DeletionRecord,
  newChain,
  type PageRecord,
  type StreamRecord,
} from '../../lib/core/index.ts';

/** Fixed values, so a test can assert exact records and command inputs. */
export const NOW = new Date('2026-03-01T12:00:00.000Z');
export const DELETION_ID = '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';
export const CHAIN_ID = '0123456789abcdef0123';
export const TABLE = 'lethe-table';
export const BUCKET = 'lethe-data';

export function aStream(overrides: Partial<StreamRecord> = {}): StreamRecord {
  const generation = overrides.generation ?? 1;
  return {
    type: 'STREAM',
    tenant: 'acme',
    stream: 'logs',
    state: 'ACTIVE',
    generation,
    bucket: BUCKET,
    prefix: `streams/acme/logs/${generation}/`,
    createdAt: '2026-02-01T00:00:00.000Z',
    updatedAt: '2026-02-01T00:00:00.000Z',
    ...overrides,
  };
}

export function aDeletion(overrides: Partial<DeletionRecord> = {}): DeletionRecord {
  const generation = overrides.generation ?? 1;
  return {
    type: 'DELETION',
    deletionId: DELETION_ID,
    tenant: 'acme',
    stream: 'logs',
    generation,
    bucket: BUCKET,
    prefix: `streams/acme/logs/${generation}/`,
    state: 'RUNNING',
    round: 1,
    attempts: 1,
    objectsDeleted: 0,
    bytesDeleted: 0,
    failedObjects: 0,
    chainsTotal: 1,
    chainsSettled: 0,
    requestedAt: '2026-03-01T11:00:00.000Z',
    executeAfter: '2026-03-01T11:00:00.000Z',
    updatedAt: '2026-03-01T11:00:00.000Z',
    ...overrides,
  };
}

/** A chain not started yet (as the dispatcher registers it), with `overrides`. */
export function aChain(overrides: Partial<ChainRecord> = {}): ChainRecord {
  const base = {
    tenant: 'acme',
    deletionId: DELETION_ID,
    round: 1,
    stream: 'logs',
    generation: 1,
    bucket: BUCKET,
    location: 'streams/acme/logs/1/',
    versioned: false,
  };
  const chain = { chainId: CHAIN_ID, prefix: 'streams/acme/logs/1/dt=2026-01-01/' };
  return { ...newChain(base, chain), ...overrides };
}

export function aPage(overrides: Partial<PageRecord> = {}): PageRecord {
  return {
    page: 0,
    lastKey: 'streams/acme/logs/1/dt=2026-01-01/c.json',
    count: 3,
    bytes: 60,
    ...overrides,
  };
}
