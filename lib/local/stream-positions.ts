import {
  CreateTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';

/**
 * Where a stream event source mapping is in each shard: Lambda keeps it in its own service, so
 * that an event source picks up after the last batch it processed, not at the trim horizon
 * again. The local runtime keeps it in the emulator (a table of its own, not the stack's), so
 * that a restart over a kept emulator resumes there too, as a redeploy of a function does.
 */
export interface StreamPositions {
  /** The sequence number processed last in the shard (all before it too), if any. */
  read(sourceArn: string, shardId: string): Promise<string | undefined>;
  save(sourceArn: string, shardId: string, sequence: string): Promise<void>;
}

/** Positions kept nowhere: every start reads each shard from its trim horizon. */
export const noPositions: StreamPositions = {
  read: async () => undefined,
  save: async () => {},
};

/** The positions in a DynamoDB table of the emulator, made if missing. */
export async function positionsTable(
  dynamodb: DynamoDBClient,
  tableName: string,
): Promise<StreamPositions> {
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    // Made by an earlier start over this emulator: its positions are the point.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const key = (sourceArn: string, shardId: string) => ({ pk: { S: `${sourceArn}#${shardId}` } });
  return {
    read: async (sourceArn, shardId) => {
      const { Item } = await dynamodb.send(
        new GetItemCommand({
          TableName: tableName,
          Key: key(sourceArn, shardId),
          ConsistentRead: true,
        }),
      );
      return Item?.sequence?.S;
    },
    save: async (sourceArn, shardId, sequence) => {
      await dynamodb.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { ...key(sourceArn, shardId), sequence: { S: sequence } },
        }),
      );
    },
  };
}

/**
 * The records of a shard read and not yet processed, in stream order: the position to keep is
 * the last record before the first one still out (a batch in a lane, retried). Records the
 * filters drop are processed as soon as they are read.
 */
export class ShardProgress {
  /** Sequence numbers read, in order, with whether each is done. */
  readonly #read: Array<{ sequence: bigint; done: boolean }> = [];
  #position: bigint | undefined;

  constructor(position?: bigint) {
    this.#position = position;
  }

  /** The last record processed with every one before it, if any. */
  get position(): bigint | undefined {
    return this.#position;
  }

  /** Records read, in stream order. */
  read(sequences: bigint[]) {
    for (const sequence of sequences) this.#read.push({ sequence, done: false });
  }

  /** Records processed (delivered, given up on, or filtered out): the position moves past them. */
  done(sequences: Iterable<bigint>) {
    const set = new Set(sequences);
    for (const entry of this.#read) if (set.has(entry.sequence)) entry.done = true;
    while (this.#read[0]?.done) this.#position = this.#read.shift()?.sequence;
  }
}
