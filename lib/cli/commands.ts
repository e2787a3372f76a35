import type { DeletionReceipt } from '../core/index.ts';
import type { Command } from './args.ts';
import type { ApiResponse, LetheClient } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { describeStream, receiptSummary, streamTable } from './format.ts';
import { type Output, ProgressReporter } from './progress.ts';
import { waitForDeletion } from './wait.ts';

export interface CommandContext {
  readonly client: LetheClient;
  readonly json: boolean;
  readonly intervalMs: number;
  readonly stdout: Output;
  /** Where progress goes, so that stdout holds only the result. */
  readonly stderr: Output;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** The bytes of FILE, or of stdin for `-`. */
  readonly readInput: (file: string) => Promise<Uint8Array>;
}

type Handled = Exclude<Command, { kind: 'help' }>;

/** Runs one command against the API and prints its result; API errors are thrown. */
export async function execute(command: Handled, context: CommandContext): Promise<ExitCode> {
  const { client, stdout } = context;
  const print = <T>(response: ApiResponse<T>, human: (body: T) => string) => {
    stdout.write(context.json ? `${JSON.stringify(response.body)}\n` : human(response.body));
    return EXIT.ok;
  };
  switch (command.kind) {
    case 'health':
      return print(await client.health(), (body) => `${body.status} ${client.endpoint}\n`);
    case 'streams.create': {
      const response = await client.createStream(command.tenant, command.stream);
      return print(response, (view) =>
        response.status === 201
          ? `created ${view.tenant}/${view.stream} generation ${view.generation} at ${view.location}\n`
          : `${view.tenant}/${view.stream} is already ACTIVE, generation ${view.generation} at ${view.location}\n`,
      );
    }
    case 'streams.get':
      return print(await client.getStream(command.tenant, command.stream), describeStream);
    case 'streams.list': {
      const page = { limit: command.limit, nextToken: command.nextToken };
      return print(await client.listStreams(command.tenant, page), (body) =>
        body.streams.length === 0 && !body.nextToken
          ? `no streams for tenant ${command.tenant}\n`
          : streamTable(body),
      );
    }
    case 'ingest': {
      const events = await context.readInput(command.file);
      const response = await client.ingest(command.tenant, command.stream, events);
      return print(response, (body) => `stored ${body.count} events in ${body.key}\n`);
    }
    case 'deletions.get':
      return settle(await client.getDeletion(command.tenant, command.deletionId), context);
    case 'streams.delete':
      return follow(await client.deleteStream(command.tenant, command.stream), command, context);
    case 'deletions.retry':
      return follow(
        await client.retryDeletion(command.tenant, command.deletionId),
        command,
        context,
      );
  }
}

/** After a 202: print the receipt, or follow it to its end with `--wait`. */
async function follow(
  accepted: ApiResponse<DeletionReceipt>,
  command: { wait: boolean },
  context: CommandContext,
): Promise<ExitCode> {
  if (!command.wait) {
    const exit = settle(accepted, context);
    if (!context.json) {
      const { tenant, deletionId } = accepted.body;
      context.stdout.write(`follow it: lethe deletions get ${tenant} ${deletionId}\n`);
    }
    return exit;
  }
  const receipt = await waitForDeletion({
    client: context.client,
    receipt: accepted.body,
    intervalMs: context.intervalMs,
    sleep: context.sleep,
    reporter: context.json
      ? undefined
      : new ProgressReporter({ output: context.stderr, now: context.now }),
  });
  return settle({ ...accepted, body: receipt }, context);
}

/** Prints a receipt; a FAILED deletion is a failure of its own kind. */
function settle(response: ApiResponse<DeletionReceipt>, context: CommandContext): ExitCode {
  const receipt = response.body;
  context.stdout.write(context.json ? `${JSON.stringify(receipt)}\n` : receiptSummary(receipt));
  return receipt.state === 'FAILED' ? EXIT.deletionFailed : EXIT.ok;
}
