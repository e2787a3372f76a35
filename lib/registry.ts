import { randomUUID } from 'node:crypto';
import {
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  BadRequestError,
  DeletionNotFoundError,
  DeletionNotRetryableError,
  StreamDeletingError,
  StreamNotFoundError,
} from './errors.ts';
import { failpoint } from './failpoints.ts';
import {
  type DeletionRecord,
  type KeyFailure,
  keys,
  OPEN_DELETIONS,
  type StreamRecord,
} from './model.ts';
import { streamPrefix } from './names.ts';
import { chainTotals } from './progress.ts';
import {
  backoff,
  cancellationOf,
  documentClient,
  isConditionFailure,
  names,
  oldItemOf,
  readItem,
  sleep,
} from './table.ts';

/** Named conditions: a reader sees the rule, not the syntax. */
const streamIsAbsent = 'attribute_not_exists(pk)';
const streamIsActive = 'attribute_exists(pk) AND #state = :active';
const streamWasDeleted = '#state = :deleted AND generation = :previous';
const streamIsActiveAt = '#state = :active AND generation = :generation';
const deletionIsNew = 'attribute_not_exists(pk)';
const deletionFailed = '#state = :failed';

export interface RegistryOptions {
  readonly tableName: string;
  readonly bucket: string;
  /** First path segment of every stream location. */
  readonly root: string;
  readonly client?: ReturnType<typeof documentClient>;
  /** Seconds a client is told to wait before writing to a deleting stream again. */
  readonly retryAfterSeconds?: number;
  readonly now?: () => Date;
  readonly newId?: () => string;
}

export interface CreateResult {
  created: boolean;
  stream: StreamRecord;
}

export interface DeletionRequest {
  created: boolean;
  deletion: DeletionRecord;
}

export interface StreamPage {
  streams: StreamRecord[];
  nextToken?: string;
}

/** How many times a write is re-decided after losing a race before giving up. */
const MAX_RACES = 8;

/**
 * The stream registry: every decision about a stream name is a condition expression or a
 * transaction, so concurrent API calls cannot both win.
 */
export class StreamRegistry {
  readonly #table: string;
  readonly #bucket: string;
  readonly #root: string;
  readonly #client: ReturnType<typeof documentClient>;
  readonly #retryAfter: number;
  readonly #now: () => Date;
  readonly #newId: () => string;

  constructor(options: RegistryOptions) {
    this.#table = options.tableName;
    this.#bucket = options.bucket;
    this.#root = options.root;
    this.#client = options.client ?? documentClient();
    this.#retryAfter = options.retryAfterSeconds ?? 30;
    this.#now = options.now ?? (() => new Date());
    this.#newId = options.newId ?? randomUUID;
  }

  /** Creates a new incarnation, or returns the ACTIVE one; refuses while a deletion runs. */
  async create(tenant: string, stream: string): Promise<CreateResult> {
    let previous: StreamRecord | undefined;
    for (let race = 0; race < MAX_RACES; race++) {
      const now = this.#now().toISOString();
      const generation = (previous?.generation ?? 0) + 1;
      const record: StreamRecord = {
        type: 'STREAM',
        tenant,
        stream,
        state: 'ACTIVE',
        generation,
        bucket: this.#bucket,
        prefix: streamPrefix(this.#root, tenant, stream, generation),
        createdAt: now,
        updatedAt: now,
      };
      try {
        await this.#client.send(
          new PutCommand({
            TableName: this.#table,
            Item: { ...keys.stream(tenant, stream), ...record },
            ...(previous
              ? {
                  ConditionExpression: streamWasDeleted,
                  ExpressionAttributeNames: names,
                  ExpressionAttributeValues: {
                    ':deleted': 'DELETED',
                    ':previous': previous.generation,
                  },
                }
              : { ConditionExpression: streamIsAbsent }),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { created: true, stream: record };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const old = oldItemOf<StreamRecord>(error);
        if (old?.state === 'ACTIVE') return { created: false, stream: old };
        if (old?.state === 'DELETING') {
          throw new StreamDeletingError(tenant, stream, old.deletionId, this.#retryAfter);
        }
        previous = old;
      }
    }
    throw new Error(`create ${tenant}/${stream} lost ${MAX_RACES} races in a row`);
  }

  async get(tenant: string, stream: string): Promise<StreamRecord> {
    const record = await readItem<StreamRecord>(
      this.#client,
      this.#table,
      keys.stream(tenant, stream),
    );
    if (!record || record.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
    return record;
  }

  async list(tenant: string, limit: number, nextToken?: string): Promise<StreamPage> {
    const { Items = [], LastEvaluatedKey } = await this.#client.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :streams)',
        FilterExpression: '#state <> :deleted',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ':pk': keys.stream(tenant, '').pk,
          ':streams': 'STREAM#',
          ':deleted': 'DELETED',
        },
        Limit: limit,
        ...(nextToken ? { ExclusiveStartKey: decodeToken(tenant, nextToken) } : {}),
      }),
    );
    return {
      streams: Items as StreamRecord[],
      ...(LastEvaluatedKey ? { nextToken: encodeToken(LastEvaluatedKey) } : {}),
    };
  }

  /**
   * Admits one ingest: the condition (ACTIVE) is decided by DynamoDB. The write is counted in
   * flight until `releaseIngest`, so a deletion requested meanwhile verifies its location only
   * after the write landed (or after the grace, if the writer died).
   */
  async admitIngest(tenant: string, stream: string): Promise<StreamRecord> {
    try {
      const { Attributes } = await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: keys.stream(tenant, stream),
          UpdateExpression: 'SET lastIngestAt = :now ADD ingests :one, inflightIngests :one',
          ConditionExpression: streamIsActive,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':now': this.#now().toISOString(),
            ':one': 1,
            ':active': 'ACTIVE',
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return Attributes as StreamRecord;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const old = oldItemOf<StreamRecord>(error);
      if (old?.state === 'DELETING') {
        throw new StreamDeletingError(tenant, stream, old.deletionId, this.#retryAfter);
      }
      throw new StreamNotFoundError(tenant, stream);
    }
  }

  /** Ends an admitted ingest, whatever became of its write. */
  async releaseIngest(admitted: StreamRecord): Promise<void> {
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: keys.stream(admitted.tenant, admitted.stream),
          UpdateExpression: 'ADD inflightIngests :minusOne',
          ConditionExpression: 'generation = :generation',
          ExpressionAttributeValues: { ':minusOne': -1, ':generation': admitted.generation },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /**
   * Marks the stream DELETING and writes its deletion record in one transaction: when this
   * returns, the tombstone is durable. A repeat returns the deletion already under way.
   */
  async requestDeletion(tenant: string, stream: string): Promise<DeletionRequest> {
    for (let race = 0; race < MAX_RACES; race++) {
      const current = await this.#getStream(tenant, stream);
      if (!current || current.state === 'DELETED') throw new StreamNotFoundError(tenant, stream);
      if (current.state === 'DELETING' && current.deletionId) {
        return { created: false, deletion: await this.getDeletion(tenant, current.deletionId) };
      }
      const now = this.#now().toISOString();
      const deletion: DeletionRecord = {
        type: 'DELETION',
        deletionId: this.#newId(),
        tenant,
        stream,
        generation: current.generation,
        bucket: current.bucket,
        prefix: current.prefix,
        state: 'PENDING',
        round: 1,
        attempts: 1,
        objectsDeleted: 0,
        bytesDeleted: 0,
        failedObjects: 0,
        chainsTotal: 0,
        chainsSettled: 0,
        requestedAt: now,
        updatedAt: now,
      };
      try {
        await this.#client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.#table,
                  Key: keys.stream(tenant, stream),
                  UpdateExpression: 'SET #state = :deleting, deletionId = :id, updatedAt = :now',
                  ConditionExpression: streamIsActiveAt,
                  ExpressionAttributeNames: names,
                  ExpressionAttributeValues: {
                    ':deleting': 'DELETING',
                    ':id': deletion.deletionId,
                    ':now': now,
                    ':active': 'ACTIVE',
                    ':generation': current.generation,
                  },
                },
              },
              {
                Put: {
                  TableName: this.#table,
                  Item: {
                    ...keys.deletion(tenant, deletion.deletionId),
                    ...deletion,
                    sweepPk: OPEN_DELETIONS,
                    sweepSk: now,
                  },
                  ConditionExpression: deletionIsNew,
                },
              },
            ],
          }),
        );
        failpoint('api.after-tombstone');
        return { created: true, deletion };
      } catch (error) {
        const cancellation = cancellationOf(error);
        if (!cancellation) throw error;
        if (cancellation.conflict) await sleep(backoff(race));
      }
    }
    throw new Error(`delete ${tenant}/${stream} lost ${MAX_RACES} races in a row`);
  }

  async getDeletion(tenant: string, deletionId: string): Promise<DeletionRecord> {
    const deletion = await readItem<DeletionRecord>(
      this.#client,
      this.#table,
      keys.deletion(tenant, deletionId),
    );
    if (!deletion) throw new DeletionNotFoundError(tenant, deletionId);
    // Until it completes, the counts live on its chains; a COMPLETED receipt holds them itself.
    if (deletion.state === 'COMPLETED') return deletion;
    return { ...deletion, ...(await chainTotals(this.#client, this.#table, deletion)) };
  }

  /** The key failures of the deletion's current round, at most `limit` of them. */
  async failures(deletion: DeletionRecord, limit = 100): Promise<KeyFailure[]> {
    if (deletion.failedObjects === 0) return [];
    const scope = keys.failuresOf(deletion.deletionId, deletion.round);
    const { Items = [] } = await this.#client.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :failures)',
        ExpressionAttributeValues: { ':pk': scope.pk, ':failures': scope.skPrefix },
        Limit: limit,
      }),
    );
    return Items.map(({ key, versionId, code, message }) => ({
      key,
      ...(versionId ? { versionId } : {}),
      code,
      message,
    }));
  }

  /** Starts a FAILED deletion again as a new round; a deletion still open is left as it is. */
  async retryDeletion(tenant: string, deletionId: string): Promise<DeletionRecord> {
    const now = this.#now().toISOString();
    try {
      const { Attributes } = await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: keys.deletion(tenant, deletionId),
          UpdateExpression: [
            'SET #state = :pending, round = round + :one, attempts = attempts + :one,',
            'failedObjects = :zero, chainsTotal = :zero, chainsSettled = :zero, updatedAt = :now,',
            'sweepPk = :open, sweepSk = :now REMOVE reason, expiresAt',
          ].join(' '),
          ConditionExpression: deletionFailed,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':pending': 'PENDING',
            ':failed': 'FAILED',
            ':one': 1,
            ':zero': 0,
            ':now': now,
            ':open': OPEN_DELETIONS,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return Attributes as DeletionRecord;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const old = oldItemOf<DeletionRecord>(error);
      if (!old) throw new DeletionNotFoundError(tenant, deletionId);
      if (old.state === 'COMPLETED') {
        throw new DeletionNotRetryableError(`deletion ${deletionId} has already completed`);
      }
      return old;
    }
  }

  async #getStream(tenant: string, stream: string): Promise<StreamRecord | undefined> {
    return readItem<StreamRecord>(this.#client, this.#table, keys.stream(tenant, stream));
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
  const { pk, sk } = (key ?? {}) as Record<string, unknown>;
  const expected = keys.stream(tenant, '');
  if (typeof pk !== 'string' || typeof sk !== 'string' || pk !== expected.pk) throw invalid();
  if (!sk.startsWith(expected.sk) || Object.keys(key as object).length !== 2) throw invalid();
  return { pk, sk };
}
