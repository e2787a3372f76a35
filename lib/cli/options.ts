import { parseArgs } from 'node:util';
import type { Command, Page } from './args.ts';
import { didYouMean } from './suggest.ts';
import { day, deletionState, graceSeconds, integer, UsageError } from './values.ts';

type Kind = Command['kind'];

/** Every option of `lethe`, as node:util's parseArgs takes them. */
export const OPTIONS = {
  endpoint: { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean', default: false },
  wait: { type: 'boolean', default: false },
  grace: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  interval: { type: 'string' },
  state: { type: 'string' },
  limit: { type: 'string' },
  'next-token': { type: 'string' },
  out: { type: 'string' },
  'key-id': { type: 'string' },
  key: { type: 'string' },
  before: { type: 'string' },
  off: { type: 'boolean', default: false },
  objects: { type: 'string' },
  concurrency: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', default: false },
} as const;

/** The options as parsed. */
export type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

/** Every long option, as typed: for suggestions. */
export const LONG_OPTIONS = Object.keys(OPTIONS).map((option) => `--${option}`);

/** The commands an option goes with; options not listed go with every command. */
const SCOPES: ReadonlyArray<readonly [keyof typeof OPTIONS, readonly Kind[]]> = [
  [
    'wait',
    [
      'streams.delete',
      'deletions.retry',
      'deletions.expedite',
      'partitions.delete',
      'tenants.delete',
    ],
  ],
  ['grace', ['streams.delete', 'tenants.delete']],
  ['dry-run', ['streams.delete']],
  ['state', ['deletions.list']],
  ['limit', ['streams.list', 'deletions.list']],
  ['next-token', ['streams.list', 'deletions.list']],
  ['out', ['deletions.certificate', 'certificate-key']],
  ['key-id', ['certificate-key']],
  ['key', ['verify']],
  ['before', ['partitions.delete']],
  ['off', ['streams.retention']],
  ['objects', ['seed']],
  ['concurrency', ['seed']],
];

/** Options that make no sense together: a dry run deletes nothing, so it has nothing to wait. */
const EXCLUSIVE: ReadonlyArray<readonly [keyof typeof OPTIONS, keyof typeof OPTIONS, string]> = [
  ['dry-run', 'grace', 'a dry run deletes nothing, so there is no grace window to give it'],
  ['dry-run', 'wait', 'a dry run deletes nothing; it waits for its plan on its own'],
];

const spelled = (kind: Kind) =>
  kind === 'streams.delete' ? ['delete', 'streams delete'] : [kind.replace('.', ' ')];

const isGiven = (values: Values, option: keyof typeof OPTIONS) => {
  const value = values[option];
  return typeof value === 'boolean' ? value : value !== undefined;
};

/** Parses the command line into options and positionals; a bad option is a UsageError. */
export function parse(argv: readonly string[]) {
  let parsed: ReturnType<typeof parseArgs<typeof CONFIG>>;
  try {
    parsed = parseArgs({ args: [...argv], ...CONFIG });
  } catch (error) {
    throw new UsageError(optionProblem(error));
  }
  // Node keeps the last of an option given twice: `--grace 7d ... --grace 0` would delete at once.
  const given = new Map<string, string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || token.value === undefined) continue;
    const earlier = given.get(token.name);
    if (earlier !== undefined) {
      throw new UsageError(
        `${token.rawName} is given twice (${JSON.stringify(earlier)}, then ${JSON.stringify(token.value)}): give it once`,
      );
    }
    given.set(token.name, token.value);
  }
  return parsed;
}

const CONFIG = { options: OPTIONS, allowPositionals: true, strict: true, tokens: true } as const;

/** Node's message for a bad option, in this CLI's words, with the nearest known option. */
function optionProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  const option = /'(-[^' =]*)/.exec(message)?.[1];
  if (option === undefined) return message;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `unknown option ${option}${didYouMean(option, LONG_OPTIONS)}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (message.includes('argument missing')) return `option ${option} needs a value`;
    // `--limit -1`: a value that starts with a dash reads as an option unless joined with =.
    if (message.includes('ambiguous')) {
      return `option ${option} needs a value; to give one that starts with -, write ${option}=VALUE`;
    }
    return `option ${option} takes no value`;
  }
  return message;
}

/** Refuses an option given to a command it does not go with, or with one it excludes. */
export function checkScopes(values: Values, kind: Kind): void {
  for (const [option, kinds] of SCOPES) {
    if (isGiven(values, option) && !kinds.includes(kind)) {
      const names = kinds.flatMap(spelled);
      const list = `${names.slice(0, -1).join(', ')}${names.length > 1 ? ' and ' : ''}${names.at(-1)}`;
      throw new UsageError(`--${option} goes with ${list}`);
    }
  }
  for (const [option, other, why] of EXCLUSIVE) {
    if (isGiven(values, option) && isGiven(values, other)) {
      throw new UsageError(`--${option} does not go with --${other}: ${why}`);
    }
  }
}

/** The command with the options that go with it. */
export function withOptions(command: Command, values: Values): Command {
  const page = (): Page => ({
    ...(values.limit !== undefined ? { limit: integer('--limit', values.limit, 1, 100) } : {}),
    ...(values['next-token'] !== undefined ? { nextToken: values['next-token'] } : {}),
  });
  switch (command.kind) {
    case 'streams.delete':
      if (values['dry-run'])
        return { kind: 'plans.create', tenant: command.tenant, stream: command.stream };
      return {
        ...command,
        wait: values.wait,
        ...(values.grace !== undefined ? { graceSeconds: graceSeconds(values.grace) } : {}),
      };
    case 'deletions.certificate':
      return {
        ...command,
        ...(values.out !== undefined ? { out: file('--out', values.out) } : {}),
      };
    case 'certificate-key':
      return {
        ...command,
        ...(values['key-id'] !== undefined ? { keyId: keyIdOf(values['key-id']) } : {}),
        ...(values.out !== undefined ? { out: file('--out', values.out) } : {}),
      };
    case 'verify':
      return {
        ...command,
        ...(values.key !== undefined ? { key: file('--key', values.key) } : {}),
      };
    case 'tenants.delete':
      return {
        ...command,
        wait: values.wait,
        ...(values.grace !== undefined ? { graceSeconds: graceSeconds(values.grace) } : {}),
      };
    case 'deletions.retry':
    case 'deletions.expedite':
      return { ...command, wait: values.wait };
    case 'streams.list':
      return { ...command, ...page() };
    case 'deletions.list':
      return {
        ...command,
        ...(values.state !== undefined ? { state: deletionState(values.state) } : {}),
        ...page(),
      };
    case 'seed':
      return {
        ...command,
        objects: integer('--objects', values.objects ?? '1000', 1, 1_000_000),
        concurrency: integer('--concurrency', values.concurrency ?? '16', 1, 64),
      };
    case 'partitions.delete':
      if (values.before === undefined) {
        throw new UsageError(
          'partitions delete needs --before YYYY-MM-DD: the partitions of days strictly before it are deleted',
        );
      }
      return { ...command, before: day('--before', values.before), wait: values.wait };
    case 'streams.retention':
      return retentionWith(command, values.off);
    default:
      return command;
  }
}

/** DAYS, or `--off`: one of them, never both. */
function retentionWith(
  command: Extract<Command, { kind: 'streams.retention' }>,
  off: boolean,
): Command {
  if (off && command.days !== 'off') {
    throw new UsageError('--off removes the retention policy: give DAYS or --off, not both');
  }
  if (!off && command.days === 'off') {
    throw new UsageError(
      'usage: lethe streams retention TENANT/STREAM DAYS, or TENANT/STREAM --off to remove it',
    );
  }
  return command;
}

/** A file an option names: not empty. */
function file(option: string, value: string): string {
  if (value !== '') return value;
  throw new UsageError(`${option} needs a file name`);
}

/** `--key-id`: a key's id as a certificate names it (a KMS key ARN), not empty. */
function keyIdOf(value: string): string {
  if (value.trim() !== '') return value;
  throw new UsageError('--key-id needs the keyId of a certificate (a KMS key ARN)');
}
