import type { ListObjectsV2CommandInput } from '@aws-sdk/client-s3';
import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareKeys, parseWorkMessage } from '../../lib/core/index.ts';
import { type Clients, createClients } from '../../lib/support/index.ts';
import { assertCellCompleted, prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/** What the stack asked of S3 and SQS, by the clients its handlers use. */
interface Calls {
  listings: Array<{ prefix: string; startAfter?: string }>;
  deletes: number;
  workMessages: Array<{ deletionId: string; page?: number }>;
}

/** Fresh clients for the handlers that record every listing, DeleteObjects and work message. */
function recordingClients(calls: Calls) {
  return (_clients: Clients): Clients => {
    const fresh = createClients({ forcePathStyle: true });
    for (const s3 of [fresh.s3, fresh.s3Deletes]) {
      s3.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'ListObjectsV2Command') {
            const input = args.input as ListObjectsV2CommandInput;
            if (!input.Delimiter) {
              calls.listings.push({
                prefix: input.Prefix ?? '',
                ...(input.StartAfter ? { startAfter: input.StartAfter } : {}),
              });
            }
          }
          if (context.commandName === 'DeleteObjectsCommand') calls.deletes++;
          return next(args);
        },
        { step: 'initialize', name: 'recordS3' },
      );
    }
    fresh.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageBatchCommand') {
          const input = args.input as SendMessageBatchCommandInput;
          for (const entry of input.Entries ?? []) {
            const message = parseWorkMessage(entry.MessageBody ?? '');
            calls.workMessages.push({
              deletionId: message.deletionId,
              ...(message.type === 'page' ? { page: message.page } : {}),
            });
          }
        }
        return next(args);
      },
      { step: 'initialize', name: 'recordMessages' },
    );
    return fresh;
  };
}

/**
 * The page the dispatcher lists to lay a round out is the first chain's first page: deleted
 * by the dispatcher, never listed twice, and all of a location of one page.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)("a round's first page", () => {
  const calls: Calls = { listings: [], deletes: 0, workMessages: [] };
  let target: TestTarget;
  let api: ApiClient;

  beforeAll(async () => {
    target = await startTarget({
      settings: { LETHE_PAGE_SIZE: '40' },
      wrapClients: recordingClients(calls),
    });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('deletes a location of one page in the dispatcher: one listing, one DeleteObjects, no work message', async () => {
    // 30 objects over three partitions and one ingested batch: one page of 40.
    const cell = await prepareCell(api, target.s3, 'onepage', 30);
    const listed = calls.listings.length;
    const deletes = calls.deletes;

    const deletionId = await requestDeletion(api, cell.tenant);
    const receipt = await waitForEnd(api, cell.tenant, deletionId);

    await assertCellCompleted(api, target.s3, cell, receipt);
    expect(calls.listings.slice(listed)).toEqual([{ prefix: cell.location.prefix }]);
    expect(calls.deletes - deletes).toBe(1);
    expect(calls.workMessages.filter((message) => message.deletionId === deletionId)).toEqual([]);
  });

  it('lists no key of the first page again in a location of many pages: the first chain goes on after it', async () => {
    // 120 objects over three partitions: the first page of 40 is all in the first partition.
    const cell = await prepareCell(api, target.s3, 'manypages', 120);
    const keys = [...(await listAll(target.s3, cell.location.bucket, cell.location.prefix)).keys()];
    const firstPageEnd = keys.sort(compareKeys)[39] ?? '';
    const listed = calls.listings.length;

    const deletionId = await requestDeletion(api, cell.tenant);
    const receipt = await waitForEnd(api, cell.tenant, deletionId);

    await assertCellCompleted(api, target.s3, cell, receipt);
    const [first, ...after] = calls.listings.slice(listed);
    expect(first).toEqual({ prefix: cell.location.prefix });
    // A later listing that could return the first page's last key would list it again.
    const again = after.filter(
      (listing) =>
        firstPageEnd.startsWith(listing.prefix) &&
        compareKeys(listing.startAfter ?? '', firstPageEnd) < 0,
    );
    expect(again).toEqual([]);
    expect(after.length).toBeGreaterThan(0);
    // The first chain's first page was never sent to a worker: its second page was.
    const pages = calls.workMessages.filter((message) => message.deletionId === deletionId);
    expect(pages.some((message) => message.page === 1)).toBe(true);
  });
});
