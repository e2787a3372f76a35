import { parseArgs } from 'node:util';
import { NAME_PATTERN } from '../core/index.ts';

export type Command =
  | { kind: 'help' }
  | { kind: 'health' }
  | { kind: 'streams.create' | 'streams.get'; tenant: string; stream: string }
  | { kind: 'streams.list'; tenant: string; limit?: number; nextToken?: string }
  | { kind: 'streams.delete'; tenant: string; stream: string; wait: boolean }
  | { kind: 'ingest'; tenant: string; stream: string; file: string }
  | { kind: 'deletions.get'; tenant: string; deletionId: string }
  | { kind: 'deletions.retry'; tenant: string; deletionId: string; wait: boolean };

export interface GlobalOptions {
  endpoint?: string;
  stack?: string;
  region?: string;
  json: boolean;
  /** Milliseconds between two reads of a receipt while waiting. */
  intervalMs: number;
}

export interface Invocation {
  command: Command;
  options: GlobalOptions;
}

/** The command line is wrong: exit 2 with the message and a pointer to `--help`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const OPTIONS = {
  endpoint: { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean', default: false },
  wait: { type: 'boolean', default: false },
  interval: { type: 'string' },
  limit: { type: 'string' },
  'next-token': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export function parseInvocation(argv: readonly string[]): Invocation {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const options: GlobalOptions = {
    json: values.json,
    intervalMs: values.interval === undefined ? 1_000 : seconds(values.interval) * 1000,
    ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
    ...(values.stack !== undefined ? { stack: values.stack } : {}),
    ...(values.region !== undefined ? { region: values.region } : {}),
  };
  const command: Command =
    values.help || positionals.length === 0 ? { kind: 'help' } : commandOf(positionals);
  if (values.wait && command.kind !== 'streams.delete' && command.kind !== 'deletions.retry') {
    throw new UsageError('--wait goes with delete, streams delete and deletions retry');
  }
  const listing = command.kind === 'streams.list';
  if (!listing && (values.limit !== undefined || values['next-token'] !== undefined)) {
    throw new UsageError('--limit and --next-token go with streams list');
  }
  if (command.kind === 'streams.delete' || command.kind === 'deletions.retry') {
    command.wait = values.wait;
  }
  if (command.kind === 'streams.list') {
    if (values.limit !== undefined) command.limit = integer('--limit', values.limit, 1, 100);
    if (values['next-token'] !== undefined) command.nextToken = values['next-token'];
  }
  return { command, options };
}

function commandOf(positionals: string[]): Command {
  const [group, ...rest] = positionals;
  const verb = group === 'streams' || group === 'deletions' ? rest.shift() : undefined;
  const args = (count: number, usage: string) => {
    if (rest.length !== count) throw new UsageError(`usage: lethe ${usage}`);
    return rest as [string, string];
  };
  switch (verb === undefined ? group : `${group} ${verb}`) {
    case 'health':
      args(0, 'health');
      return { kind: 'health' };
    case 'streams create':
    case 'streams get':
      return {
        kind: verb === 'create' ? 'streams.create' : 'streams.get',
        ...streamRef(args(1, `streams ${verb} TENANT/STREAM`)[0]),
      };
    case 'streams list':
      return { kind: 'streams.list', tenant: name('tenant', args(1, 'streams list TENANT')[0]) };
    case 'streams delete':
      return {
        kind: 'streams.delete',
        ...streamRef(args(1, 'streams delete TENANT/STREAM')[0]),
        wait: false,
      };
    case 'delete':
      return {
        kind: 'streams.delete',
        ...streamRef(args(1, 'delete TENANT/STREAM')[0]),
        wait: false,
      };
    case 'ingest': {
      const [ref, file] = args(2, 'ingest TENANT/STREAM FILE (a JSON array; - for stdin)');
      return { kind: 'ingest', ...streamRef(ref), file };
    }
    case 'deletions get':
    case 'deletions retry': {
      const [tenant, deletionId] = args(2, `deletions ${verb} TENANT DELETION_ID`);
      const kind = verb === 'get' ? 'deletions.get' : 'deletions.retry';
      const target = { tenant: name('tenant', tenant), deletionId };
      return kind === 'deletions.get' ? { kind, ...target } : { kind, ...target, wait: false };
    }
    default:
      throw new UsageError(`unknown command: ${positionals.slice(0, 2).join(' ')}`);
  }
}

function streamRef(ref: string): { tenant: string; stream: string } {
  const parts = ref.split('/');
  if (parts.length !== 2)
    throw new UsageError(`expected TENANT/STREAM, got ${JSON.stringify(ref)}`);
  return { tenant: name('tenant', parts[0] ?? ''), stream: name('stream', parts[1] ?? '') };
}

function name(kind: 'tenant' | 'stream', value: string): string {
  if (!NAME_PATTERN.test(value)) {
    throw new UsageError(
      `${kind} name must match ${NAME_PATTERN.source} (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

function integer(option: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) {
    throw new UsageError(`${option} must be an integer from ${min} to ${max} (got ${value})`);
  }
  return number;
}

function seconds(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < 0.1 || number > 3600) {
    throw new UsageError(`--interval must be a number of seconds from 0.1 to 3600 (got ${value})`);
  }
  return number;
}
