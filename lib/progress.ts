import {
  BatchWriteCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  UpdateCommand,
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
const itemIsNew = 'attribute_not_exists(pk)';
const itemExists = 'attribute_exists(pk)';
const streamIsDeletedBy = 'deletionId = :id AND generation = :generation';

export type WriteOutcome = 'recorded' | 'duplicate' | 'fenced';

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

  async getPage(
    deletion: DeletionRecord,
    chainId: string,
    page: number,
  ): Promise<PageRecord | undefined> {
    return readItem<PageRecord>(
      this.#client,
      this.#table,
      keys.page(deletion.deletionId, deletion.round, chainId, page),
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
    const now = this.#now().toISOString();
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: keys.deletion(deletion.tenant, deletion.deletionId),
          UpdateExpression:
            'SET #state = :running, chainsTotal = :total, versioned = :versioned, updatedAt = :now, sweepSk = :now',
          ConditionExpression: deletionIsPendingRound,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':running': 'RUNNING',
            ':pending': 'PENDING',
            ':round': deletion.round,
            ':total': chainsTotal,
            ':versioned': versioned,
            ':now': now,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  chains(deletion: DeletionRecord): AsyncGenerator<ChainRecord> {
    const scope = keys.chainsOf(deletion.deletionId, deletion.round);
    return this.#query<ChainRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':prefix': scope.skPrefix },
      ConsistentRead: true,
    });
  }

  /** Pages of the current round that were listed but whose deletion is not recorded. */
  openPages(deletion: DeletionRecord): AsyncGenerator<PageRecord> {
    const scope = keys.pagesOf(deletion.deletionId, deletion.round);
    return this.#query<PageRecord>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': scope.pk, ':prefix': scope.skPrefix },
      ConsistentRead: true,
    });
  }

  /**
   * Records that page `page.page` of a chain was listed (or, without a page, that the chain
   * listed empty), advancing the chain's cursor. Only one listing of a page number can win.
   */
  async recordListing(
    deletion: DeletionRecord,
    chain: ChainRecord,
    pageNumber: number,
    page: PageRecord | undefined,
    ended: boolean,
  ): Promise<WriteOutcome> {
    const now = this.#now().toISOString();
    // A partial page (versions of one key that go on) leaves the cursor where it was.
    const cursor = page?.partial ? chain.lastKey : page?.lastKey;
    const chainUpdate = {
      Update: {
        TableName: this.#table,
        Key: keys.chain(deletion.deletionId, deletion.round, chain.chainId),
        UpdateExpression: cursor
          ? 'SET lastPage = :page, ended = :ended, lastKey = :lastKey'
          : 'SET lastPage = :page, ended = :ended',
        ConditionExpression: chainIsAtPage,
        ExpressionAttributeValues: {
          ':page': pageNumber,
          ':previous': pageNumber - 1,
          ':ended': ended,
          ':false': false,
          ...(cursor ? { ':lastKey': cursor } : {}),
        },
      },
    };
    const deletionUpdate = this.#deletionUpdate(
      deletion,
      'ADD pagesListed :pages, chainsEnded :ended SET updatedAt = :now, sweepSk = :now',
      { ':pages': page ? 1 : 0, ':ended': ended ? 1 : 0, ':now': now },
    );
    const pagePut = page
      ? [
          {
            Put: {
              TableName: this.#table,
              Item: {
                ...keys.page(deletion.deletionId, deletion.round, chain.chainId, pageNumber),
                ...page,
              },
              ConditionExpression: itemIsNew,
            },
          },
        ]
      : [];
    return this.#transact([chainUpdate, deletionUpdate, ...pagePut], {
      0: 'duplicate',
      2: 'duplicate',
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

  /** Counts a page's deletion exactly once and forgets the page. */
  async completePage(
    deletion: DeletionRecord,
    page: PageRecord,
    result: { objects: number; bytes: number; failed: number },
  ): Promise<WriteOutcome> {
    const now = this.#now().toISOString();
    return this.#transact(
      [
        {
          Delete: {
            TableName: this.#table,
            Key: keys.page(deletion.deletionId, deletion.round, page.chainId, page.page),
            ConditionExpression: itemExists,
          },
        },
        this.#deletionUpdate(
          deletion,
          [
            'ADD objectsDeleted :objects, bytesDeleted :bytes, failedObjects :failed, pagesDone :one',
            'SET updatedAt = :now, sweepSk = :now',
          ].join(' '),
          {
            ':objects': result.objects,
            ':bytes': result.bytes,
            ':failed': result.failed,
            ':one': 1,
            ':now': now,
          },
        ),
      ],
      { 0: 'duplicate' },
    );
  }

  /** RUNNING -> COMPLETED, and the stream name becomes free for a new incarnation. */
  async complete(deletion: DeletionRecord): Promise<WriteOutcome> {
    const now = this.#now();
    const finish = this.#deletionUpdate(
      deletion,
      'SET #state = :completed, completedAt = :now, updatedAt = :now, expiresAt = :expires REMOVE sweepPk, sweepSk',
      { ':completed': 'COMPLETED', ':now': now.toISOString(), ':expires': this.#expiry(now) },
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
          `SET #state = :failedState, updatedAt = :now, expiresAt = :expires${reason ? ', reason = :reason' : ''} REMOVE sweepPk, sweepSk`,
          {
            ':failedState': 'FAILED',
            ':now': now.toISOString(),
            ':expires': this.#expiry(now),
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
            'SET #state = :pending, round = round + :one, chainsTotal = :zero, chainsEnded = :zero,',
            'pagesListed = :zero, pagesDone = :zero, versioned = :versioned, updatedAt = :now,',
            'sweepSk = :now',
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
