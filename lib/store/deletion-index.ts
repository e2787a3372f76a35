import {
  BadRequestError,
  type DeletionRecord,
  type DeletionState,
  isDeletionId,
} from '../core/index.ts';
import { keys, LIST_INDEX, OPEN_DELETIONS, SCHEDULED_DELETIONS, SWEEP_INDEX } from './layout.ts';
import type { Table } from './table.ts';

export interface DeletionPage {
  deletions: DeletionRecord[];
  nextToken?: string;
}

/** Queries a page of the list index fetches at most, looking for `limit` matches of a state. */
const MAX_QUERIES = 10;

/**
 * Deletions found through the table's indexes (reads only; the deletion store writes them):
 * open ones by last progress and scheduled ones by start, for the sweeper, and a tenant's
 * deletions newest first, for the API.
 */
export class DeletionIndex {
  readonly #table: Table;

  constructor(options: { readonly table: Table }) {
    this.#table = options.table;
  }

  /** Open deletions whose last progress is older than `cutoff`. */
  stale(cutoff: Date): AsyncGenerator<DeletionRecord> {
    return this.#sweep(OPEN_DELETIONS, '<', cutoff);
  }

  /** Scheduled deletions whose grace window is over at `now`. */
  due(now: Date): AsyncGenerator<DeletionRecord> {
    return this.#sweep(SCHEDULED_DELETIONS, '<=', now);
  }

  /** How many deletions wait out their grace window: DynamoDB counts them, none is read. */
  async scheduled(): Promise<number> {
    return this.#table.count({
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: 'sweepPk = :partition',
      ExpressionAttributeValues: { ':partition': SCHEDULED_DELETIONS },
    });
  }

  /** A tenant's deletions, newest first, optionally of one state only. */
  async list(
    tenant: string,
    options: { limit: number; state?: DeletionState | undefined; nextToken?: string | undefined },
  ): Promise<DeletionPage> {
    const scope = keys.listed({ tenant, deletionId: '', requestedAt: '' });
    // An empty token is a token, and not one this list gave: refused, not the first page.
    let start =
      options.nextToken !== undefined ? decodeToken(tenant, options.nextToken) : undefined;
    const found: DeletionRecord[] = [];
    for (let query = 0; query < MAX_QUERIES && found.length < options.limit; query++) {
      const { items, lastKey } = await this.#table.queryPage<DeletionRecord>({
        IndexName: LIST_INDEX,
        KeyConditionExpression: 'listPk = :tenant',
        ...(options.state
          ? {
              FilterExpression: '#state = :state',
              ExpressionAttributeNames: { '#state': 'state' },
            }
          : {}),
        ExpressionAttributeValues: {
          ':tenant': scope.listPk,
          ...(options.state ? { ':state': options.state } : {}),
        },
        ScanIndexForward: false,
        Limit: options.limit - found.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      found.push(...items);
      start = lastKey as Record<string, string> | undefined;
      if (!start) break;
    }
    const deletions = await this.#read(found);
    return { deletions, ...(start ? { nextToken: encodeToken(start) } : {}) };
  }

  /** The whole items of what an index (which holds keys and states) found, in its order. */
  async #read(found: DeletionRecord[]): Promise<DeletionRecord[]> {
    const items = await Promise.all(
      found.map((entry) =>
        this.#table.read<DeletionRecord>(keys.deletion(entry.tenant, entry.deletionId)),
      ),
    );
    return items.filter((item): item is DeletionRecord => item !== undefined);
  }

  #sweep(partition: string, compare: '<' | '<=', bound: Date): AsyncGenerator<DeletionRecord> {
    return this.#table.query<DeletionRecord>({
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: `sweepPk = :partition AND sweepSk ${compare} :bound`,
      ExpressionAttributeValues: { ':partition': partition, ':bound': bound.toISOString() },
    });
  }
}

const encodeToken = (key: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(key)).toString('base64url');

function decodeToken(tenant: string, token: string): Record<string, string> {
  const invalid = () => new BadRequestError('InvalidNextToken', 'nextToken is not valid');
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const fields = (key ?? {}) as Record<string, unknown>;
  const expected = keys.listed({ tenant, deletionId: '', requestedAt: '' }).listPk;
  const names = ['pk', 'sk', 'listPk', 'listSk'];
  const valid =
    Object.keys(fields).length === names.length &&
    names.every((name) => typeof fields[name] === 'string') &&
    fields.listPk === expected &&
    fields.pk === expected &&
    isListedKey(String(fields.sk), String(fields.listSk));
  if (!valid) throw invalid();
  return fields as Record<string, string>;
}

/**
 * Whether a token's sort keys are a deletion's as the index wrote them: its id, and when it was
 * requested with the same id. Anything else, longer than a key may be or not, is not a token.
 */
function isListedKey(sk: string, listSk: string): boolean {
  const deletionId = sk.slice('DELETION#'.length);
  return (
    sk.startsWith('DELETION#') &&
    isDeletionId(deletionId) &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(listSk.slice(0, -deletionId.length - 1)) &&
    listSk.endsWith(`#${deletionId}`)
  );
}
