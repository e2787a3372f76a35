import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type {
  Message,
  SendMessageBatchCommandInput,
  SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';

// Lambda's recursive loop detection, as the local runtime models it (opt-in). Lambda keeps a
// `Lineage=<hash>:<count>` field in the trace header of each invocation; the SDK passes the
// header along with what the function sends (SQS keeps it as the `AWSTraceHeader` system
// attribute), and the invocation that message starts counts one more. A function invoked more
// than 16 times by one chain is stopped when its RecursiveLoop is Terminate.

/** Invocations of one function a chain may make; the next one is stopped. */
export const LOOP_LIMIT = 16;

/** How many times a chain of events has invoked each function, by the function's hash. */
export type Lineage = Readonly<Record<string, number>>;

const current = new AsyncLocalStorage<Lineage>();

/** The lineage's key for a function: a short hash of its name, as Lambda's. */
export const lineageKey = (functionId: string) =>
  createHash('sha256').update(functionId).digest('hex').slice(0, 8);

/** The lineage of the invocation running now, if any. */
export const currentLineage = (): Lineage | undefined => current.getStore();

/** Runs `work` as an invocation of this lineage: what it sends carries the lineage on. */
export const runWithLineage = <T>(lineage: Lineage, work: () => Promise<T>): Promise<T> =>
  current.run(lineage, work);

/** The lineage one step on: `functionId` invoked once more. */
export function invokedOnce(lineage: Lineage, functionId: string): Lineage {
  const key = lineageKey(functionId);
  return { ...lineage, [key]: (lineage[key] ?? 0) + 1 };
}

/** Whether Lambda stops the invocation of `functionId` this lineage would make. */
export const pastLimit = (lineage: Lineage, functionId: string) =>
  (invokedOnce(lineage, functionId)[lineageKey(functionId)] ?? 0) > LOOP_LIMIT;

/** Several messages' lineages as one invocation's: the highest count of each function. */
export function merged(lineages: Lineage[]): Lineage {
  const result: Record<string, number> = {};
  for (const lineage of lineages) {
    for (const [key, count] of Object.entries(lineage)) {
      result[key] = Math.max(result[key] ?? 0, count);
    }
  }
  return result;
}

/** An X-Ray trace header carrying the lineage: `Root=...;Lineage=<hash>:<count>|...`. */
export function traceHeader(lineage: Lineage): string {
  const entries = Object.entries(lineage).map(([key, count]) => `${key}:${count}`);
  return `Root=1-00000000-000000000000000000000000;Lineage=${entries.join('|')}`;
}

/** The lineage in a trace header (none: a chain's first message). */
export function parseLineage(header: string | undefined): Lineage {
  const field = header
    ?.split(';')
    .find((part) => part.startsWith('Lineage='))
    ?.slice('Lineage='.length);
  if (!field) return {};
  const lineage: Record<string, number> = {};
  for (const entry of field.split('|')) {
    const [key, count] = entry.split(':');
    if (key && Number.isInteger(Number(count))) lineage[key] = Number(count);
  }
  return lineage;
}

/**
 * The trace headers of the messages sent, by body. SQS keeps a message's header as its
 * `AWSTraceHeader` system attribute; moto 5.2.1 drops it from a SendMessageBatch entry, so the
 * runtime remembers it here too. By body, recorded before the send: a poller may receive the
 * message before its send has answered with an id. A body sent again (a resend) takes the
 * lineage of its latest send.
 */
export class LineageLedger {
  readonly #headers = new Map<string, string>();

  record(body: string | undefined, header: string) {
    if (body !== undefined) this.#headers.set(body, header);
  }

  /** A received message's lineage: its system attribute, or what was recorded at its send. */
  of(message: Pick<Message, 'Attributes' | 'Body'>): Lineage {
    const recorded = message.Body === undefined ? undefined : this.#headers.get(message.Body);
    return parseLineage(message.Attributes?.AWSTraceHeader ?? recorded);
  }

  /** Forgets a message that left the queue. */
  forget(body: string | undefined) {
    if (body !== undefined) this.#headers.delete(body);
  }
}

const TRACE_ATTRIBUTE = 'AWSTraceHeader';

/**
 * Carries the running invocation's lineage on every message an SQS client sends, as the SDK
 * does in Lambda: the `AWSTraceHeader` system attribute on each message, and the ledger's
 * record of its body. Sends outside an invocation (the pollers' own) carry none.
 */
export function carryLineage(sqs: SQSClient, ledger: LineageLedger) {
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const lineage = currentLineage();
      const name = context.commandName;
      if (!lineage || (name !== 'SendMessageCommand' && name !== 'SendMessageBatchCommand')) {
        return next(args);
      }
      const header = traceHeader(lineage);
      const attribute = {
        [TRACE_ATTRIBUTE]: { DataType: 'String', StringValue: header },
      };
      if (name === 'SendMessageCommand') {
        const input = args.input as SendMessageCommandInput;
        ledger.record(input.MessageBody, header);
        return next({
          ...args,
          input: {
            ...input,
            MessageSystemAttributes: { ...input.MessageSystemAttributes, ...attribute },
          },
        });
      }
      const input = args.input as SendMessageBatchCommandInput;
      const Entries = input.Entries?.map((entry) => {
        ledger.record(entry.MessageBody, header);
        return {
          ...entry,
          MessageSystemAttributes: { ...entry.MessageSystemAttributes, ...attribute },
        };
      });
      return next({ ...args, input: { ...input, Entries } });
    },
    { step: 'initialize', name: 'letheCarryLineage' },
  );
}
