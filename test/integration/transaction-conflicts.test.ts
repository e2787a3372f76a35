import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulators, startEmulators } from '../../lib/local/emulator.ts';
import type { Clients } from '../../lib/support/index.ts';
import { assertCellCompleted, prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { apiClient } from '../helpers/http.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Deletions end to end on an emulator that refuses a share of DynamoDB writes as DynamoDB does
 * when a transaction is in flight on their item (launcher fault mode
 * dynamodb-transaction-conflict): every refused write is tried again, and each deletion still
 * completes with exact counts and nothing left.
 */
const RATE = 0.2;

/** The refusals the functions' DynamoDB client saw, by kind. */
const seen = { writes: 0, refusedWrites: 0, cancelledTransactions: 0 };
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand']);

const countingConflicts = (clients: Clients): Clients => {
  clients.dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      if (WRITES.has(context.commandName ?? '')) seen.writes++;
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && error.name === 'TransactionConflictException') {
          seen.refusedWrites++;
        }
        if (
          error instanceof TransactionCanceledException &&
          error.CancellationReasons?.some((reason) => reason.Code === 'TransactionConflict')
        ) {
          seen.cancelledTransactions++;
        }
        throw error;
      }
    },
    { step: 'initialize', name: 'countConflicts' },
  );
  return clients;
};

describe(`deleting while ${RATE * 100}% of DynamoDB writes meet a transaction in flight`, () => {
  let emulators: Emulators | undefined;
  let target: TestTarget | undefined;

  beforeAll(async () => {
    emulators = await startEmulators({
      faults: { 'dynamodb-transaction-conflict': RATE },
      faultSeed: 36,
    });
    target = await startTarget({
      endpoint: emulators.main.endpoint,
      s3Endpoint: emulators.s3.endpoint,
      // Small pages: each chain is a few pages, each page a listing and a count on its chain.
      settings: { LETHE_PAGE_SIZE: '25' },
      wrapClients: countingConflicts,
    });
  });
  afterAll(async () => {
    await target?.stop();
    await emulators?.stop();
  });

  it('retries every refused write and transaction: both deletions COMPLETED, exact counts, nothing left', async () => {
    if (!target) throw new Error('no stack');
    const api = apiClient(target.baseUrl);
    const s3 = target.s3;
    const cells = [];
    for (const tenant of ['busy', 'contended']) cells.push(await prepareCell(api, s3, tenant, 90));

    const receipts = await Promise.all(
      cells.map(async (cell) =>
        waitForEnd(api, cell.tenant, await requestDeletion(api, cell.tenant)),
      ),
    );

    console.info(`conflicts the functions met: ${JSON.stringify(seen)}`);
    // About a fifth of some 60 writes: none at all would mean the mode was off.
    expect(seen.refusedWrites + seen.cancelledTransactions).toBeGreaterThan(0);
    for (const [index, cell] of cells.entries()) {
      expect(receipts[index]?.failures).toBeUndefined();
      await assertCellCompleted(api, s3, cell, receipts[index] as Record<string, unknown>);
    }
  });
});
