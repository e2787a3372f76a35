import {
  BatchWriteCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  type ChainRecord,
  type DeletionRecord,
  type KeyFailure,
  keys,
  OPEN_DELETIONS,
  type PageRecord,
  type StreamRecord,
} from './model.ts';
import {
  backoff,
  cancellationOf,
  documentClient,
  isConditionFailure,
  names,
  readItem,
  sleep,
} from './table.ts';

/** Named conditions of the pipeline: every write is fenced to one deletion round. */
const deletionIsRunningRound = '#state = :running AND round = :round';
const deletionIsPendingRound = '#state = :pending AND round = :round';
const deletionIsUnchangedSince = '#state = :seen AND round = :round AND updatedAt = :updatedAt';
const chainIsAtPage = 'lastPage = :previous AND ended = :false';
const chainHasEnded = 'ended = :true AND settled = :false';
const roundIsUnverified =
  'chainsSettled >= chainsTotal AND (attribute_not_exists(verifiedRound) OR verifiedRound < :round)';
const itemIsNew = 'attribute_not_exists(pk)';
const streamIsDeletedBy = 'deletionId = :id AND generation = :generation';

export type WriteOutcome = 'recorded' | 'duplicate' | 'fenced';

/** A conditional write on a chain: the chain as it now is, or `duplicate` if it lost. */
export type ChainWrite = { outcome: 'recorded'; chain: ChainRecord } | { outcome: 'duplicate' };

/** What a deletion deleted so far: every chain of every round, read at once. */
export async function chainTotals(
  client: ReturnType<typeof documentClient>,
  tableName: string,
  deletion: Pick<DeletionRecord, 'deletionId' | 'round'>,
) {
  const totals = { objectsDeleted: 0, bytesDeleted: 0, failedObjects: 0 };
  let start: Record<string, unknown> | undefined;
  do {
    const { Items = [], LastEvaluatedKey } = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :chains)',
        ExpressionAttributeValues: {
          ':pk': `DELETION#${deletion.deletionId}`,
          ':chains': 'CHAIN#',
        },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const chain of Items as ChainRecord[]) {
      totals.objectsDeleted += chain.objectsDeleted ?? 0;
      totals.bytesDeleted += chain.bytesDeleted ?? 0;
      // Failures of earlier rounds were tried again; only the current round's stand.
      if (chain.round === deletion.round) totals.failedObjects += chain.failedObjects ?? 0;
    }
    start = LastEvaluatedKey;
  } while (start);
  return totals;
}

const totalsOf = (deletion: DeletionRecord) => ({
  ':objects': deletion.objectsDeleted,
  ':bytes': deletion.bytesDeleted,
  ':failed': deletion.failedObjects,
});

export interface ProgressOptions {
  readonly tableName: string;
  readonly client?: ReturnType<typeof documentClient>;
  /** Name of the sparse index of open deletions, keyed by last progress. */
  readonly sweepIndex?: string;
  /** Days a finished receipt stays readable before DynamoDB's TTL removes it. */
  readonly receiptRetentionDays?: number;
  readonly now?: () => Date;
}

/** How often a transaction is tried again when another one touched the same items. */
const MAX_CONFLICTS = 10;

/** Progress of deletions: chains, pages, counters and state transitions, all conditional. */
export class ProgressStore {
  readonly #table: string;
  readonly #client: ReturnType<typeof documentClient>;
  readonly #sweepIndex: string;
  readonly #retentionDays: number;
  readonly #now: () => Date;

  constructor(options: ProgressOptions) {
    this.#table = options.tableName;
    this.#client = options.client ?? documentClient();
    this.#sweepIndex = options.sweepIndex ?? 'sweep';
    this.#retentionDays = options.receiptRetentionDays ?? 365;
    this.#now = options.now ?? (() => new Date());
  }

  async getDeletion(tenant: string, deletionId: string): Promise<DeletionRecord | undefined> {
    return readItem<DeletionRecord>(this.#client, this.#table, keys.deletion(tenant, deletionId));
  }

  async getStream(tenant: string, stream: string): Promise<StreamRecord | undefined> {
    return readItem<StreamRecord>(this.#client, this.#table, keys.stream(tenant, stream));
  }

  async getChain(deletion: DeletionRecord, chainId: string): Promise<ChainRecord | undefined> {
    return readItem<ChainRecord>(
      this.#client,
      this.#table,
      keys.chain(deletion.deletionId, deletion.round, chainId),
    );
  }

  /** Creates the chains of a round; chains that already exist keep their progress. */
  async registerChains(
    deletion: DeletionRecord,
    chains: Array<{ chainId: string; prefix: string }>,
  ) {
    const put = async ({ chainId, prefix }: { chainId: string; prefix: string }) => {
      const chain: ChainRecord = {
        chainId,
        round: deletion.round,
        prefix,
        lastPage: -1,
        ended: false,
        open: {},
        objectsDeleted: 0,
        bytesDeleted: 0,
        failedObjects: 0,
        pagesDone: 0,
        settled: false,
      };
      try {
        await this.#client.send(
          new PutCommand({
            TableName: this.#table,
            Item: { ...keys.chain(deletion.deletionId, deletion.round, chainId), ...chain },
            ConditionExpression: itemIsNew,
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    };
    await inBatches(chains, 16, put);
  }

  /** PENDING -> RUNNING once every chain of the round is registered. False if already done. */
  async startRound(
    deletion: DeletionRecord,
    chainsTotal: number,
    versioned = false,
  ): Promise<boolean> {
    return this.#updateDeletion(
      deletion,
      [
        'SET #state = :running, chainsTotal = :total, chainsSettled = :zero,',
        'versioned = :versioned, updatedAt = :now, sweepSk = :now',
      ].join(' '),
      {
        ':running': 'RUNNING',
        ':total': chainsTotal,
        ':zero': 0,
        ':versioned': versioned,
        ':now': this.#now().toISOString(),
      },
      'PENDING',
    );
  }

  /** The chains of the deletion's current round. */
  chains(deletion: DeletionRecord): AsyncGenerator<ChainRecord> {
    const scope = keys.chainsOf(deletion.deletionId, deletion.round);
    return this.#query<ChainRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':prefix': scope.skPrefix },
      ConsistentRead: true,
    });
  }

  /** What every chain of every round deleted, and what the current round could not. */
  async totals(deletion: DeletionRecord) {
    return chainTotals(this.#client, this.#table, deletion);
  }

  /**
   * Records that page `pageNumber` of a chain was listed (or, without a page, that the chain
   * listed empty), advancing the chain's cursor and keeping the page among the chain's open
   * pages. One conditional write on the chain: only one listing of a page number can win.
   */
  async recordListing(
    deletion: DeletionRecord,
    chain: ChainRecord,
    pageNumber: number,
    page: PageRecord | undefined,
    ended: boolean,
  ): Promise<ChainWrite> {
    // A partial page (versions of one key that go on) leaves the cursor where it was.
    const cursor = page?.partial ? chain.lastKey : page?.lastKey;
    const sets = ['lastPage = :page', 'ended = :ended'];
    if (cursor) sets.push('lastKey = :lastKey');
    if (page) sets.push('#open.#page = :record');
    return this.#writeChain(deletion, chain.chainId, {
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: chainIsAtPage,
      ExpressionAttributeNames: {
        ...(page ? { '#open': 'open', '#page': String(pageNumber) } : {}),
      },
      ExpressionAttributeValues: {
        ':page': pageNumber,
        ':previous': pageNumber - 1,
        ':ended': ended,
        ':false': false,
        ...(cursor ? { ':lastKey': cursor } : {}),
        ...(page ? { ':record': page } : {}),
      },
    });
  }

  /** Remembers keys that could not be deleted (idempotent: one item per key and round). */
  async recordFailures(deletion: DeletionRecord, failures: KeyFailure[]) {
    const requests = failures.map((failure) => ({
      PutRequest: {
        Item: {
          ...keys.failure(
            deletion.deletionId,
            deletion.round,
            failure.versionId ? `${failure.key}#${failure.versionId}` : failure.key,
          ),
          ...failure,
        },
      },
    }));
    for (let start = 0; start < requests.length; start += 25) {
      let pending: typeof requests = requests.slice(start, start + 25);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await sleep(backoff(attempt));
        const { UnprocessedItems } = await this.#client.send(
          new BatchWriteCommand({ RequestItems: { [this.#table]: pending } }),
        );
        pending = (UnprocessedItems?.[this.#table] ?? []) as typeof requests;
      }
    }
  }

  /**
   * Counts an open page's deletion on its chain and closes it, exactly once: one conditional
   * write on the chain item (no transaction, nothing shared between chains).
   */
  async completePage(
    deletion: DeletionRecord,
    page: PageRecord,
    result: { objects: number; bytes: number; failed: number },
  ): Promise<ChainWrite> {
    return this.#writeChain(deletion, page.chainId, {
      UpdateExpression: [
        'REMOVE #open.#page',
        'ADD objectsDeleted :objects, bytesDeleted :bytes, failedObjects :failed, pagesDone :one',
      ].join(' '),
      ConditionExpression: 'attribute_exists(#open.#page)',
      ExpressionAttributeNames: { '#open': 'open', '#page': String(page.page) },
      ExpressionAttributeValues: {
        ':objects': result.objects,
        ':bytes': result.bytes,
        ':failed': result.failed,
        ':one': 1,
      },
    });
  }

  /**
   * Counts a chain that has ended with no page open towards its round, once (the only
   * transaction of the page path, and one per chain, not per page).
   */
  async settleChain(deletion: DeletionRecord, chain: ChainRecord): Promise<WriteOutcome> {
    const now = this.#now().toISOString();
    return this.#transact(
      [
        {
          Update: {
            TableName: this.#table,
            Key: keys.chain(deletion.deletionId, deletion.round, chain.chainId),
            UpdateExpression: 'SET settled = :true',
            ConditionExpression: chainHasEnded,
            ExpressionAttributeValues: { ':true': true, ':false': false },
          },
        },
        this.#deletionUpdate(
          deletion,
          'ADD chainsSettled :one SET updatedAt = :now, sweepSk = :now',
          { ':one': 1, ':now': now },
        ),
      ],
      { 0: 'duplicate' },
    );
  }

  /** Marks progress on a running deletion, so the sweeper does not take it for stalled. */
  async touch(deletion: DeletionRecord): Promise<void> {
    await this.#updateDeletion(deletion, 'SET updatedAt = :now, sweepSk = :now', {
      ':now': this.#now().toISOString(),
    });
  }

  /**
   * Claims the verification of a round that is ready for it: when the last chains settle at
   * the same moment, each of their workers sees the round ready, and only the one that wins
   * this write lists the location. A claimer that dies leaves the deletion to the sweeper.
   */
  async claimVerification(deletion: DeletionRecord): Promise<boolean> {
    return this.#updateDeletion(
      deletion,
      'SET verifiedRound = :round, updatedAt = :now, sweepSk = :now',
      { ':now': this.#now().toISOString() },
      'RUNNING',
      roundIsUnverified,
    );
  }

  /** RUNNING -> COMPLETED, and the stream name becomes free for a new incarnation. */
  async complete(deletion: DeletionRecord): Promise<WriteOutcome> {
    const now = this.#now();
    const finish = this.#deletionUpdate(
      deletion,
      [
        'SET #state = :completed, completedAt = :now, updatedAt = :now, expiresAt = :expires,',
        'objectsDeleted = :objects, bytesDeleted = :bytes, failedObjects = :failed',
        'REMOVE sweepPk, sweepSk',
      ].join(' '),
      {
        ':completed': 'COMPLETED',
        ':now': now.toISOString(),
        ':expires': this.#expiry(now),
        ...totalsOf(deletion),
      },
    );
    const freeName = {
      Update: {
        TableName: this.#table,
        Key: keys.stream(deletion.tenant, deletion.stream),
        UpdateExpression: 'SET #state = :deleted, updatedAt = :now REMOVE deletionId',
        ConditionExpression: streamIsDeletedBy,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ':deleted': 'DELETED',
          ':now': now.toISOString(),
          ':id': deletion.deletionId,
          ':generation': deletion.generation,
        },
      },
    };
    return this.#transact([finish, freeName], {});
  }

  /** Ends a deletion as FAILED; its stream stays DELETING until a retry completes it. */
  async fail(
    deletion: DeletionRecord,
    reason?: { code: string; message: string },
  ): Promise<WriteOutcome> {
    const now = this.#now();
    return this.#transact(
      [
        this.#deletionUpdate(
          deletion,
          [
            'SET #state = :failedState, updatedAt = :now, expiresAt = :expires,',
            `objectsDeleted = :objects, bytesDeleted = :bytes, failedObjects = :failed${reason ? ', reason = :reason' : ''}`,
            'REMOVE sweepPk, sweepSk',
          ].join(' '),
          {
            ':failedState': 'FAILED',
            ':now': now.toISOString(),
            ':expires': this.#expiry(now),
            ...totalsOf(deletion),
            ...(reason ? { ':reason': reason } : {}),
          },
          deletion.state,
        ),
      ],
      {},
    );
  }

  /** RUNNING -> PENDING with round + 1: the location is listed and dispatched afresh. */
  async nextRound(
    deletion: DeletionRecord,
    versioned = deletion.versioned ?? false,
  ): Promise<WriteOutcome> {
    const now = this.#now().toISOString();
    return this.#transact(
      [
        this.#deletionUpdate(
          deletion,
          [
            'SET #state = :pending, round = round + :one, chainsTotal = :zero, chainsSettled = :zero,',
            'versioned = :versioned, updatedAt = :now, sweepSk = :now',
          ].join(' '),
          { ':pending': 'PENDING', ':one': 1, ':zero': 0, ':now': now, ':versioned': versioned },
        ),
      ],
      {},
    );
  }

  /** Open deletions whose last progress is older than `cutoff`. */
  stale(cutoff: Date): AsyncGenerator<DeletionRecord> {
    return this.#query<DeletionRecord>({
      IndexName: this.#sweepIndex,
      KeyConditionExpression: 'sweepPk = :open AND sweepSk < :cutoff',
      ExpressionAttributeValues: { ':open': OPEN_DELETIONS, ':cutoff': cutoff.toISOString() },
    });
  }

  /**
   * Claims a stale deletion for one resume attempt: succeeds only if nothing moved since the
   * sweeper read it, so concurrent sweepers and late workers cannot both act on it.
   */
  async claimStale(deletion: DeletionRecord): Promise<DeletionRecord | undefined> {
    const now = this.#now().toISOString();
    try {
      const { Attributes } = await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: keys.deletion(deletion.tenant, deletion.deletionId),
          UpdateExpression: 'SET attempts = attempts + :one, updatedAt = :now, sweepSk = :now',
          ConditionExpression: deletionIsUnchangedSince,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':one': 1,
            ':now': now,
            ':seen': deletion.state,
            ':round': deletion.round,
            ':updatedAt': deletion.updatedAt,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes as DeletionRecord;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async #writeChain(
    deletion: DeletionRecord,
    chainId: string,
    update: Pick<
      UpdateCommandInput,
      | 'UpdateExpression'
      | 'ConditionExpression'
      | 'ExpressionAttributeNames'
      | 'ExpressionAttributeValues'
    >,
  ): Promise<ChainWrite> {
    try {
      const { Attributes } = await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: keys.chain(deletion.deletionId, deletion.round, chainId),
          ...update,
          ...(update.ExpressionAttributeNames &&
          Object.keys(update.ExpressionAttributeNames).length > 0
            ? {}
            : { ExpressionAttributeNames: undefined }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { outcome: 'recorded', chain: Attributes as ChainRecord };
    } catch (error) {
      if (isConditionFailure(error)) return { outcome: 'duplicate' };
      throw error;
    }
  }

  #expiry(now: Date) {
    return Math.floor(now.getTime() / 1000) + this.#retentionDays * 86_400;
  }

  #deletionUpdate(
    deletion: DeletionRecord,
    expression: string,
    values: Record<string, unknown>,
    expectedState: DeletionRecord['state'] = 'RUNNING',
  ) {
    return {
      Update: {
        TableName: this.#table,
        Key: keys.deletion(deletion.tenant, deletion.deletionId),
        UpdateExpression: expression,
        ConditionExpression:
          expectedState === 'RUNNING' ? deletionIsRunningRound : deletionIsPendingRound,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ...values,
          ...(expectedState === 'RUNNING' ? { ':running': 'RUNNING' } : { ':pending': 'PENDING' }),
          ':round': deletion.round,
        },
      },
    };
  }

  /**
   * One conditional UpdateItem on the deletion, fenced to its round and `expectedState` as in
   * a transaction (plus `alsoRequire`, if given). False when the condition fails.
   */
  async #updateDeletion(
    deletion: DeletionRecord,
    expression: string,
    values: Record<string, unknown>,
    expectedState: DeletionRecord['state'] = 'RUNNING',
    alsoRequire?: string,
  ): Promise<boolean> {
    const { Update } = this.#deletionUpdate(deletion, expression, values, expectedState);
    const condition = alsoRequire
      ? `${Update.ConditionExpression} AND ${alsoRequire}`
      : Update.ConditionExpression;
    try {
      await this.#client.send(new UpdateCommand({ ...Update, ConditionExpression: condition }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Runs a transaction, retrying conflicts. A failed condition on the deletion item means the
   * work is fenced (another round or state); `onFailed` names what a failure of item i means.
   */
  async #transact(
    items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>,
    onFailed: Record<number, WriteOutcome>,
  ): Promise<WriteOutcome> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#client.send(new TransactWriteCommand({ TransactItems: items }));
        return 'recorded';
      } catch (error) {
        const cancellation = cancellationOf(error);
        if (!cancellation) throw error;
        if (cancellation.failedIndex >= 0) {
          return onFailed[cancellation.failedIndex] ?? 'fenced';
        }
        if (!cancellation.conflict || attempt >= MAX_CONFLICTS) throw error;
        await sleep(backoff(attempt));
      }
    }
  }

  async *#query<T>(input: Omit<QueryCommandInput, 'TableName'>): AsyncGenerator<T> {
    let start: Record<string, unknown> | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await this.#client.send(
        new QueryCommand({
          TableName: this.#table,
          ...input,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of Items) yield item as T;
      start = LastEvaluatedKey;
    } while (start);
  }
}

/** Runs `task` over `items`, at most `width` at a time. */
export async function inBatches<T>(items: T[], width: number, task: (item: T) => Promise<void>) {
  for (let start = 0; start < items.length; start += width) {
    await Promise.all(items.slice(start, start + width).map(task));
  }
}
