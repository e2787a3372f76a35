import type { Command } from './args.ts';
import { saveCertificate, saveCertificateKey, type WriteOutput } from './certificates.ts';
import { ApiError, type ApiResponse } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { type FollowContext, follow, settle } from './follow.ts';
import { deletionTable, describeStream, streamTable } from './format.ts';
import { ingestHints } from './hints.ts';
import { dryRun, settlePlan } from './plans.ts';
import { plural } from './progress.ts';
import { seed } from './seed.ts';
import { smoke } from './smoke.ts';
import { offboard, settleOffboarding } from './tenants.ts';
import { inputName, UsageError } from './values.ts';

export type { Interrupts } from './follow.ts';

/** What a command needs to run: the client, the outputs, the clocks. */
export interface CommandContext extends FollowContext {
  /** The bytes of FILE, or of stdin for `-`. */
  readonly readInput: (file: string) => Promise<Uint8Array>;
  /** Writes the file of `--out`. */
  readonly writeOutput: WriteOutput;
}

/**
 * The commands that `execute` runs: help and version need no API, verify perhaps none (see
 * main.ts).
 */
type Handled = Exclude<Command, { kind: 'help' | 'version' | 'verify' }>;

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
    case 'ingest':
      return ingest(command, context);
    case 'deletions.get':
      return settle((await client.getDeletion(command.tenant, command.deletionId)).body, context);
    case 'deletions.list':
      return listDeletions(command, context);
    case 'deletions.cancel': {
      const { body } = await client.cancelDeletion(command.tenant, command.deletionId);
      const exit = settle(body, context, true);
      if (!context.json)
        stdout.write(`${body.tenant}/${body.stream} is ACTIVE again, its data untouched\n`);
      return exit;
    }
    case 'streams.delete': {
      const { tenant, stream, graceSeconds } = command;
      return follow(await client.deleteStream(tenant, stream, graceSeconds), command.wait, context);
    }
    case 'deletions.retry':
      return follow(
        await client.retryDeletion(command.tenant, command.deletionId),
        command.wait,
        context,
      );
    case 'deletions.expedite':
      return follow(
        await client.expediteDeletion(command.tenant, command.deletionId),
        command.wait,
        context,
      );
    case 'plans.create':
      return dryRun(await client.createPlan(command.tenant, command.stream), context);
    case 'plans.get':
      return settlePlan((await client.getPlan(command.tenant, command.planId)).body, context);
    case 'deletions.certificate':
      return saveCertificate(command, context);
    case 'certificate-key':
      return saveCertificateKey(command, context);
    case 'seed':
      return seed(command, context);
    case 'smoke':
      return smoke(context);
    case 'partitions.delete': {
      const { tenant, stream, before } = command;
      return follow(await client.deletePartitions(tenant, stream, before), command.wait, context);
    }
    case 'streams.retention':
      return retention(command, context);
    case 'tenants.delete':
      return offboard(command, context);
    case 'tenants.get':
      return settleOffboarding((await client.getOffboarding(command.tenant)).body, context);
    case 'tenants.cancel':
      return settleOffboarding(
        (await client.cancelOffboarding(command.tenant)).body,
        context,
        true,
      );
  }
}

/** Sets the retention policy (DAYS) or removes it (`--off`), and says what it now is. */
async function retention(
  command: Extract<Command, { kind: 'streams.retention' }>,
  context: CommandContext,
): Promise<ExitCode> {
  const { tenant, stream, days } = command;
  const response =
    days === 'off'
      ? await context.client.removeRetention(tenant, stream)
      : await context.client.setRetention(tenant, stream, days);
  const view = response.body;
  const ref = `${view.tenant}/${view.stream}`;
  context.stdout.write(
    context.json
      ? `${JSON.stringify(view)}\n`
      : view.retentionDays
        ? `${ref} keeps ${plural(view.retentionDays, 'day')} of partitions; older ones are deleted every day\n`
        : `${ref} has no retention policy: its partitions are kept until deleted\n`,
  );
  return EXIT.ok;
}

/**
 * Sends the file as it is, less a UTF-8 byte order mark (which editors on Windows add and JSON
 * parsers refuse); an empty file is refused before anything is sent. A refusal comes back with
 * hints drawn from the file.
 */
async function ingest(
  command: Extract<Command, { kind: 'ingest' }>,
  context: CommandContext,
): Promise<ExitCode> {
  const read = await context.readInput(command.file);
  const events = hasByteOrderMark(read) ? read.subarray(3) : read;
  if (new TextDecoder().decode(events).trim() === '') {
    throw new UsageError(
      `${inputName(command.file)} is empty: ingest takes a JSON array of events, e.g. [{"level":"info"}]`,
    );
  }
  let response: ApiResponse<{ key: string; count: number }>;
  try {
    response = await context.client.ingest(command.tenant, command.stream, events);
  } catch (error) {
    throw error instanceof ApiError ? error.withHints(ingestHints(error, events)) : error;
  }
  const { key, count } = response.body;
  context.stdout.write(
    context.json
      ? `${JSON.stringify(response.body)}\n`
      : `stored ${plural(count, 'event')} in ${key}\n`,
  );
  return EXIT.ok;
}

const hasByteOrderMark = (bytes: Uint8Array) =>
  bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

async function listDeletions(
  command: Extract<Command, { kind: 'deletions.list' }>,
  context: CommandContext,
): Promise<ExitCode> {
  const { tenant, state, limit } = command;
  const response = await context.client.listDeletions(tenant, {
    state,
    limit,
    nextToken: command.nextToken,
  });
  const body = response.body;
  if (context.json) {
    context.stdout.write(`${JSON.stringify(body)}\n`);
  } else if (body.deletions.length === 0 && !body.nextToken) {
    context.stdout.write(`no ${state ? `${state} ` : ''}deletions for tenant ${tenant}\n`);
  } else {
    const options = `${state ? ` --state ${state}` : ''}${limit ? ` --limit ${limit}` : ''}`;
    context.stdout.write(
      deletionTable(
        body,
        (token) => `lethe deletions list ${tenant}${options} --next-token ${token}`,
      ),
    );
  }
  return EXIT.ok;
}
