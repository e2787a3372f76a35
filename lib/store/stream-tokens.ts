import { BadRequestError, isValidName, type StreamRecord } from '../core/index.ts';
import { keys } from './layout.ts';
import type { Table } from './table.ts';

/** Queries one page of a tenant's streams makes at most, looking for `limit` streams. */
const MAX_QUERIES = 10;

/**
 * A page of a tenant's streams that are not DELETED. DynamoDB applies `Limit` before the
 * filter, so one query may find only deleted names and return none of the live streams after
 * them: the page reads on (a few queries at most) until it holds `limit` or the streams end.
 */
export async function streamPage(
  table: Table,
  tenant: string,
  limit: number,
  nextToken?: string,
): Promise<{ streams: StreamRecord[]; nextToken?: string }> {
  const scope = keys.streamsOf(tenant);
  // An empty token is a token, and not one this list gave: refused, not the first page.
  let start: Record<string, unknown> | undefined =
    nextToken !== undefined ? decodeToken(tenant, nextToken) : undefined;
  const streams: StreamRecord[] = [];
  for (let query = 0; query < MAX_QUERIES && streams.length < limit; query++) {
    const { items, lastKey } = await table.queryPage<StreamRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :streams)',
      FilterExpression: '#state <> :deleted',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':pk': scope.pk,
        ':streams': scope.skPrefix,
        ':deleted': 'DELETED',
      },
      Limit: limit - streams.length,
      // An offboarding fans out over this list: a stream created a moment ago must be in it.
      ConsistentRead: true,
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    streams.push(...items);
    start = lastKey;
    if (!start) break;
  }
  return { streams, ...(start ? { nextToken: encodeToken(start) } : {}) };
}

/** The `nextToken` of a page of a tenant's streams: the last key read, checked on the way back. */
export const encodeToken = (key: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(key)).toString('base64url');

export function decodeToken(tenant: string, token: string): Record<string, string> {
  const invalid = () => new BadRequestError('InvalidNextToken', 'nextToken is not valid');
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { pk, sk } = (key ?? {}) as Record<string, unknown>;
  const expected = keys.streamsOf(tenant);
  if (typeof pk !== 'string' || typeof sk !== 'string' || pk !== expected.pk) throw invalid();
  const name = sk.slice(expected.skPrefix.length);
  if (
    !sk.startsWith(expected.skPrefix) ||
    !isValidName(name) ||
    Object.keys(key as object).length !== 2
  ) {
    throw invalid();
  }
  return { pk, sk };
}
