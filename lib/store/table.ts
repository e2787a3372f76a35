import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { RETRY, retry } from '../support/index.ts';
import type { Condition } from './conditions.ts';
import { cancellationOf, writeOnce } from './contention.ts';
import { type ItemKey, recordOf, SEQUENCE_ATTRIBUTE } from './layout.ts';

export type DocumentClient = DynamoDBDocumentClient;
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A document client that drops `undefined` attributes, so optional fields can be spread. */
export const documentClient = (client: DynamoDBClient = new DynamoDBClient({})): DocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** An update: its expression with its own names and values, and the condition it needs. */
export interface Change {
  readonly update: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
  readonly condition?: Condition;
}

/** A conditional write's result: the item as it now is, or as the failed condition saw it. */
export type Written<T> = { ok: true; item: T } | { ok: false; old: T | undefined };

/**
 * A transaction's result: committed, or the indexes of the items whose condition failed, in
 * order (DynamoDB checks them all), with the item the first of them saw.
 */
export type Transacted = { ok: true } | { ok: false; failed: number[]; old?: unknown };

const nonEmpty = <T extends object>(value: T | undefined) =>
  value && Object.keys(value).length > 0 ? value : undefined;

/** The update with the item's write count raised by one, in its ADD clause (an expression has one). */
export function counted(update: string): string {
  const add = /\bADD\s+/.exec(update);
  if (!add) return `${update} ADD #lethe_sequence :lethe_one`;
  const at = add.index + add[0].length;
  return `${update.slice(0, at)}#lethe_sequence :lethe_one, ${update.slice(at)}`;
}

/** The expression attributes of a change and its condition, merged; the write counted. */
function expressionOf(change: Change) {
  return {
    UpdateExpression: counted(change.update),
    ...(change.condition ? { ConditionExpression: change.condition.expression } : {}),
    ExpressionAttributeNames: {
      ...change.names,
      ...change.condition?.names,
      '#lethe_sequence': SEQUENCE_ATTRIBUTE,
    },
    ExpressionAttributeValues: {
      ...change.values,
      ...change.condition?.values,
      ':lethe_one': 1,
    },
  };
}

/** A new item: its first write. */
const first = <T extends object>(item: T) => ({ ...item, [SEQUENCE_ATTRIBUTE]: 1 });

/**
 * The one table, as the stores use it: strongly consistent reads (every decision in Lethe reads
 * the latest state), conditional writes that report the item their condition saw (no second
 * read), writes and transactions retried on conflict with a transaction, and paged queries.
 */
export class Table {
  readonly name: string;
  readonly #client: DocumentClient;

  constructor(client: DocumentClient, name: string) {
    this.#client = client;
    this.name = name;
  }

  async read<T>(key: ItemKey): Promise<T | undefined> {
    const { Item } = await this.#client.send(
      new GetCommand({ TableName: this.name, Key: key, ConsistentRead: true }),
    );
    return recordOf<T>(Item);
  }

  /** A conditional UpdateItem: the new item, or the item that failed the condition. */
  async update<T>(key: ItemKey, change: Change): Promise<Written<T>> {
    try {
      const { Attributes } = await writeOnce(() =>
        this.#client.send(
          new UpdateCommand({
            TableName: this.name,
            Key: key,
            ...expressionOf(change),
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { ok: true, item: recordOf<T>(Attributes) as T };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item as Record<string, AttributeValue> | undefined;
      return { ok: false, old: old ? recordOf<T>(unmarshall(old)) : undefined };
    }
  }

  /** A conditional PutItem of `record` under `key` (with index attributes, if any). */
  async put<T extends object>(
    key: ItemKey,
    record: T,
    condition: Condition,
    extra: Record<string, unknown> = {},
  ): Promise<Written<T>> {
    try {
      await writeOnce(() =>
        this.#client.send(
          new PutCommand({
            TableName: this.name,
            Item: first({ ...key, ...record, ...extra }),
            ConditionExpression: condition.expression,
            ExpressionAttributeNames: nonEmpty(condition.names),
            ExpressionAttributeValues: nonEmpty(condition.values),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { ok: true, item: record };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item as Record<string, AttributeValue> | undefined;
      return { ok: false, old: old ? recordOf<T>(unmarshall(old)) : undefined };
    }
  }

  /** The transaction item of an update, for a store's part in a transaction. */
  updateItem(key: ItemKey, change: Change): TransactItem {
    return { Update: { TableName: this.name, Key: key, ...expressionOf(change) } };
  }

  /** The transaction item of a condition on an item that the transaction does not write. */
  checkItem(key: ItemKey, condition: Condition): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.name,
        Key: key,
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: nonEmpty(condition.names),
        ExpressionAttributeValues: nonEmpty(condition.values),
      },
    };
  }

  /** The transaction item of a conditional put. */
  putItem(item: Record<string, unknown>, condition: Condition): TransactItem {
    return {
      Put: {
        TableName: this.name,
        Item: first(item),
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: nonEmpty(condition.names),
        ExpressionAttributeValues: nonEmpty(condition.values),
      },
    };
  }

  /**
   * Runs a transaction, retrying it while DynamoDB cancels it for a conflict with another one
   * (a cancelled transaction applied nothing, so the retry is its first application).
   * A failed condition is an answer, not an error: its index (and the item it saw) is returned.
   */
  async transact(items: TransactItem[]): Promise<Transacted> {
    return retry(RETRY.contention, async () => {
      try {
        await this.#client.send(
          new TransactWriteCommand({
            TransactItems: items.map((item) => withOldItem(item)),
          }),
        );
        return { done: true, value: { ok: true } as Transacted };
      } catch (error) {
        const cancellation = cancellationOf(error);
        if (!cancellation) throw error;
        if (cancellation.failed.length > 0) {
          const { failed, old } = cancellation;
          return { done: true, value: { ok: false, failed, old } as Transacted };
        }
        if (!cancellation.conflict) throw error;
        return { done: false, why: 'transaction conflicts' };
      }
    });
  }

  /** Every item a query finds, page by page; its `pk` and `sk` too `withKeys`. */
  async *query<T>(
    input: Omit<QueryCommandInput, 'TableName'>,
    withKeys = false,
  ): AsyncGenerator<T> {
    let start: Record<string, unknown> | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await this.#client.send(
        new QueryCommand({
          TableName: this.name,
          ...input,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of Items) yield (withKeys ? item : recordOf<T>(item)) as T;
      start = LastEvaluatedKey;
    } while (start);
  }

  /** One page of a query, with the key to continue from. */
  async queryPage<T>(input: Omit<QueryCommandInput, 'TableName'>) {
    const { Items = [], LastEvaluatedKey } = await this.#client.send(
      new QueryCommand({ TableName: this.name, ...input }),
    );
    return { items: Items.map((item) => recordOf<T>(item) as T), lastKey: LastEvaluatedKey };
  }

  /** How many items a query finds (DynamoDB counts them; no item is returned). */
  async count(input: Omit<QueryCommandInput, 'TableName' | 'Select'>): Promise<number> {
    let total = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const { Count = 0, LastEvaluatedKey } = await this.#client.send(
        new QueryCommand({
          TableName: this.name,
          ...input,
          Select: 'COUNT',
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      total += Count;
      start = LastEvaluatedKey;
    } while (start);
    return total;
  }

  /** Reads items by key, 100 a request, consistently; in the order of `keys`. */
  async readMany<T>(keys: ItemKey[]): Promise<Array<T | undefined>> {
    const found = new Map<string, T | undefined>();
    const id = (key: { pk?: unknown; sk?: unknown }) => `${key.pk}\u0000${key.sk}`;
    for (let start = 0; start < keys.length; start += 100) {
      let pending: Array<Record<string, unknown>> = keys
        .slice(start, start + 100)
        .map((key) => ({ ...key }));
      await retry(RETRY.contention, async () => {
        const { Responses, UnprocessedKeys } = await this.#client.send(
          new BatchGetCommand({
            RequestItems: { [this.name]: { Keys: pending, ConsistentRead: true } },
          }),
        );
        for (const item of Responses?.[this.name] ?? []) found.set(id(item), recordOf<T>(item));
        pending = UnprocessedKeys?.[this.name]?.Keys ?? [];
        return pending.length === 0
          ? { done: true, value: undefined }
          : { done: false, why: `${pending.length} keys unprocessed` };
      });
    }
    return keys.map((key) => found.get(id(key)));
  }

  /**
   * Puts items unconditionally, 25 at a time. PutItem, not BatchWriteItem: IAM cannot hold that
   * one to puts, and a grant of it would let a function delete items (it costs the same writes).
   */
  async putAll(items: Array<Record<string, unknown>>): Promise<void> {
    for (let start = 0; start < items.length; start += 25) {
      const batch = items.slice(start, start + 25);
      await Promise.all(
        batch.map((Item) =>
          writeOnce(() =>
            this.#client.send(new PutCommand({ TableName: this.name, Item: first(Item) })),
          ),
        ),
      );
    }
  }
}

/** Asks every conditional item of a transaction for the item its condition saw. */
function withOldItem(item: TransactItem): TransactItem {
  for (const kind of ['Update', 'Put', 'Delete', 'ConditionCheck'] as const) {
    const inner = item[kind];
    if (inner?.ConditionExpression) {
      return { [kind]: { ...inner, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
    }
  }
  return item;
}
