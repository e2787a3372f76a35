import type { Clients } from '#lib/support/index.ts';

export type Service = 's3' | 'sqs' | 'dynamodb';

/** What one SDK command cost, over a measurement window. */
export interface CommandTally {
  /** `client.send` calls. */
  calls: number;
  /** HTTP requests, retries included: what AWS bills. */
  attempts: number;
  /** Items the calls carried: SQS messages sent, DynamoDB items written or read, S3 keys deleted. */
  items: number;
  /** Calls that carried no items, e.g. empty receives. */
  empty: number;
  errors: number;
  /** Latency of each call, retries included, in milliseconds. */
  ms: number[];
}

export type CountSnapshot = Record<Service, Record<string, CommandTally>>;

const DYNAMO_WRITES = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);
const DYNAMO_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
/** Calls a Lambda event source mapping makes on the function's behalf, not the handlers. */
export const EVENT_SOURCE_CALLS = new Set(['ReceiveMessage', 'DeleteMessageBatch']);

type Input = Record<string, unknown>;
type Next = (args: { input: Input }) => Promise<{ output: Input }>;
interface Stack {
  add(
    middleware: (next: Next, context: { commandName?: string }) => Next,
    options: { step: string; name: string; priority?: 'high' | 'low'; override?: boolean },
  ): void;
}

const length = (value: unknown) => (Array.isArray(value) ? value.length : 0);
const sumOfArrays = (value: unknown) =>
  Object.values((value ?? {}) as Record<string, unknown>).reduce<number>(
    (sum, entries) => sum + length(entries),
    0,
  );

/** Items carried by one call: what the per-item figures (messages, write units) count. */
export function itemsOf(command: string, input: Input, output: Input | undefined): number {
  switch (command) {
    case 'SendMessage':
      return 1;
    case 'SendMessageBatch':
    case 'DeleteMessageBatch':
      return length(input.Entries);
    case 'ReceiveMessage':
      return length(output?.Messages);
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return length(input.TransactItems);
    case 'BatchWriteItem':
      return sumOfArrays(input.RequestItems);
    case 'BatchGetItem':
      return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown }>).reduce(
        (sum, request) => sum + length(request.Keys),
        0,
      );
    case 'DeleteObjects':
      return length((input.Delete as { Objects?: unknown } | undefined)?.Objects);
    default:
      return 1;
  }
}

/**
 * Counts every request of the clients it is attached to, by service and command, with SDK
 * middleware: `initialize` sees each `send` once (command, input, output, latency), and
 * `deserialize`, below the retry middleware, sees each HTTP attempt.
 */
export class RequestCounter {
  #tallies: CountSnapshot = { s3: {}, sqs: {}, dynamodb: {} };
  readonly #observers: Array<(event: CallEvent) => void> = [];

  /** Adds the counting middleware to each client (the same instances, so every user counts). */
  attach(clients: Clients): Clients {
    this.#attach(clients.s3, 's3');
    this.#attach(clients.s3Deletes, 's3');
    this.#attach(clients.sqs, 'sqs');
    this.#attach(clients.dynamodb, 'dynamodb');
    return clients;
  }

  /** Sees every completed call, e.g. to build a timeline. */
  observe(observer: (event: CallEvent) => void) {
    this.#observers.push(observer);
  }

  reset() {
    this.#tallies = { s3: {}, sqs: {}, dynamodb: {} };
  }

  snapshot(): CountSnapshot {
    return structuredClone(this.#tallies);
  }

  #tally(service: Service, command: string): CommandTally {
    const byCommand = this.#tallies[service];
    byCommand[command] ??= { calls: 0, attempts: 0, items: 0, empty: 0, errors: 0, ms: [] };
    return byCommand[command];
  }

  #attach(client: { middlewareStack: unknown }, service: Service) {
    const stack = client.middlewareStack as Stack;
    stack.add(
      (next, context) => async (args) => {
        const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const started = performance.now();
        let output: Input | undefined;
        let failed = false;
        try {
          const result = await next(args);
          output = result.output;
          return result;
        } catch (error) {
          failed = true;
          throw error;
        } finally {
          const ms = performance.now() - started;
          const tally = this.#tally(service, command);
          tally.calls += 1;
          const items = itemsOf(command, args.input, output);
          tally.items += items;
          if (items === 0) tally.empty += 1;
          tally.ms.push(ms);
          if (failed) tally.errors += 1;
          for (const observer of this.#observers) {
            observer({ service, command, input: args.input, output, ms, failed });
          }
        }
      },
      { step: 'initialize', name: 'benchCountCalls', priority: 'high', override: true },
    );
    stack.add(
      (next, context) => async (args) => {
        const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        // Counted when the attempt ends, as calls are: a long poll in flight across a reset
        // then counts on one side of it only.
        try {
          return await next(args);
        } finally {
          this.#tally(service, command).attempts += 1;
        }
      },
      { step: 'deserialize', name: 'benchCountAttempts', override: true },
    );
  }
}

export interface CallEvent {
  service: Service;
  command: string;
  input: Input;
  output: Input | undefined;
  ms: number;
  failed: boolean;
}

/** The figures the benchmark reports from a snapshot. */
export interface Economy {
  s3Requests: number;
  s3ByCommand: Record<string, number>;
  /** SQS calls made by the handlers (sends), and messages in them. */
  sqsSendCalls: number;
  sqsMessages: number;
  /** SQS calls the local event source made (receives, deletes): billed on AWS too. */
  sqsPollCalls: number;
  sqsPollEmptyReceives: number;
  /** Receives that returned messages: one worker invocation each. */
  sqsReceivesWithMessages: number;
  sqsDeleteBatches: number;
  dynamoWriteCalls: number;
  dynamoWriteItems: number;
  dynamoReadCalls: number;
  dynamoReadItems: number;
  /** Estimated request units: 1 per standard write, 2 per transactional item (items < 1 KB). */
  dynamoWriteUnits: number;
  /** 1 per strongly consistent read or query page (< 4 KB), 2 per transactional item. */
  dynamoReadUnits: number;
  retries: number;
}

export function economyOf(snapshot: CountSnapshot): Economy {
  const entries = (service: Service) => Object.entries(snapshot[service]);
  const sum = (service: Service, pick: (command: string, tally: CommandTally) => number) =>
    entries(service).reduce((total, [command, tally]) => total + pick(command, tally), 0);
  return {
    s3Requests: sum('s3', (_, tally) => tally.attempts),
    s3ByCommand: Object.fromEntries(entries('s3').map(([command, t]) => [command, t.attempts])),
    sqsSendCalls: sum('sqs', (command, t) => (command.startsWith('SendMessage') ? t.attempts : 0)),
    sqsMessages: sum('sqs', (command, t) => (command.startsWith('SendMessage') ? t.items : 0)),
    sqsPollCalls: sum('sqs', (command, t) => (EVENT_SOURCE_CALLS.has(command) ? t.attempts : 0)),
    sqsPollEmptyReceives: snapshot.sqs.ReceiveMessage?.empty ?? 0,
    sqsReceivesWithMessages:
      (snapshot.sqs.ReceiveMessage?.attempts ?? 0) - (snapshot.sqs.ReceiveMessage?.empty ?? 0),
    sqsDeleteBatches: snapshot.sqs.DeleteMessageBatch?.attempts ?? 0,
    dynamoWriteCalls: sum('dynamodb', (command, t) =>
      DYNAMO_WRITES.has(command) ? t.attempts : 0,
    ),
    dynamoWriteItems: sum('dynamodb', (command, t) => (DYNAMO_WRITES.has(command) ? t.items : 0)),
    dynamoReadCalls: sum('dynamodb', (command, t) => (DYNAMO_READS.has(command) ? t.attempts : 0)),
    dynamoReadItems: sum('dynamodb', (command, t) => (DYNAMO_READS.has(command) ? t.items : 0)),
    dynamoWriteUnits: sum('dynamodb', (command, t) =>
      command === 'TransactWriteItems' ? 2 * t.items : DYNAMO_WRITES.has(command) ? t.items : 0,
    ),
    dynamoReadUnits: sum('dynamodb', (command, t) =>
      command === 'TransactGetItems'
        ? 2 * t.items
        : command === 'Query' || command === 'Scan'
          ? t.calls
          : DYNAMO_READS.has(command)
            ? t.items
            : 0,
    ),
    retries: (['s3', 'sqs', 'dynamodb'] as const).reduce(
      (total, service) => total + sum(service, (_, t) => t.attempts - t.calls),
      0,
    ),
  };
}
