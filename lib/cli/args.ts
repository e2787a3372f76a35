import type { DeletionState } from '../core/index.ts';
import { COMMANDS, GROUPS, type Group, groupLines, TOP_LEVEL, verbsOf } from './help.ts';
import { checkScopes, parse, withOptions } from './options.ts';
import { didYouMean, nearest } from './suggest.ts';
import {
  deletionId,
  name,
  planId,
  retentionDays,
  seconds,
  streamRef,
  UsageError,
} from './values.ts';

export { LONG_OPTIONS } from './options.ts';
export { UsageError } from './values.ts';

/** Which page of a list to read. */
export interface Page {
  limit?: number;
  nextToken?: string;
}

/** One command of `lethe`, with its arguments and the options that go with it. */
export type Command =
  /** `topic`: a group (`streams`) or a command of its own (`delete`, `verify`...). */
  | { kind: 'help'; topic?: string }
  /** `lethe --version`: which lethe this is, as every CLI answers. */
  | { kind: 'version' }
  | { kind: 'health' }
  | { kind: 'streams.create' | 'streams.get'; tenant: string; stream: string }
  | ({ kind: 'streams.list'; tenant: string } & Page)
  | { kind: 'streams.delete'; tenant: string; stream: string; wait: boolean; graceSeconds?: number }
  | { kind: 'ingest'; tenant: string; stream: string; file: string }
  | { kind: 'deletions.get' | 'deletions.cancel'; tenant: string; deletionId: string }
  | ({ kind: 'deletions.list'; tenant: string; state?: DeletionState } & Page)
  | {
      kind: 'deletions.retry' | 'deletions.expedite';
      tenant: string;
      deletionId: string;
      wait: boolean;
    }
  /** `lethe delete TENANT/STREAM --dry-run`: request a plan and wait for it. */
  | { kind: 'plans.create'; tenant: string; stream: string }
  | { kind: 'plans.get'; tenant: string; planId: string }
  /** Without `out`, the certificate goes to stdout. */
  | { kind: 'deletions.certificate'; tenant: string; deletionId: string; out?: string }
  /** Without `keyId`, the key that signs now. */
  | { kind: 'certificate-key'; keyId?: string; out?: string }
  /** With `key` (a PEM file), offline; without it, the key for the file's keyId is fetched. */
  | { kind: 'verify'; file: string; key?: string }
  /** `lethe seed`: `objects` small batches ingested, `concurrency` at a time. */
  | { kind: 'seed'; tenant: string; stream: string; objects: number; concurrency: number }
  /** The `dt=` partitions of days strictly before `before` (YYYY-MM-DD). */
  | { kind: 'partitions.delete'; tenant: string; stream: string; before: string; wait: boolean }
  /** Offboard a whole tenant: every stream of it gets a deletion. */
  | { kind: 'tenants.delete'; tenant: string; wait: boolean; graceSeconds?: number }
  | { kind: 'tenants.get' | 'tenants.cancel'; tenant: string }
  /** Keep `days` days of partitions, or (`off`) remove the policy. */
  | { kind: 'streams.retention'; tenant: string; stream: string; days: number | 'off' }
  /** `lethe smoke`: the end-to-end check of a deployment, under a tenant of its own. */
  | { kind: 'smoke' };

/** The options that go with every command. */
export interface GlobalOptions {
  endpoint?: string;
  stack?: string;
  region?: string;
  json: boolean;
  /** Milliseconds between two reads of a receipt while waiting. */
  intervalMs: number;
}

/** A parsed command line. */
export interface Invocation {
  command: Command;
  options: GlobalOptions;
}

/** Parses `lethe`'s arguments; a wrong command line is a UsageError. */
export function parseInvocation(argv: readonly string[]): Invocation {
  const { values, positionals } = parse(argv);
  const options: GlobalOptions = {
    json: values.json,
    intervalMs: values.interval === undefined ? 1_000 : seconds(values.interval) * 1000,
    ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
    ...(values.stack !== undefined ? { stack: values.stack } : {}),
    ...(values.region !== undefined ? { region: values.region } : {}),
  };
  if (values.help) {
    // A group's verb is checked (`streams bogus --help` is a usage error); a command's arguments
    // are not read (`delete acme/logs --help` is delete's help).
    const topic = positionals.slice(0, isGroup(positionals[0]) ? 2 : 1);
    return { command: helpOf(topic), options };
  }
  if (values.version) return { command: { kind: 'version' }, options };
  const command = commandOf(positionals);
  if (command.kind !== 'help') checkScopes(values, command.kind);
  return { command: withOptions(command, values), options };
}

const isGroup = (word: string | undefined): word is Group =>
  (GROUPS as readonly (string | undefined)[]).includes(word);

/** The command the positional arguments name. */
function commandOf(positionals: string[]): Command {
  const [first, ...rest] = positionals;
  if (first === undefined) return { kind: 'help' };
  if (first === 'help') return helpOf(rest);
  if (isGroup(first)) return groupCommand(first, rest);
  return topCommand(first, rest);
}

/**
 * `lethe help [TOPIC]`, `lethe [GROUP] --help`; `lethe help GROUP VERB` is the group's help,
 * as `lethe GROUP VERB --help` is. Any other word after the topic is a usage error, not ignored.
 */
function helpOf(rest: string[]): Command {
  const [topic, verb, ...more] = rest;
  if (topic === undefined || (topic === 'help' && verb === undefined)) return { kind: 'help' };
  if (!TOP_LEVEL.includes(topic)) {
    throw new UsageError(`unknown help topic ${topic}${didYouMean(topic, TOP_LEVEL)}`);
  }
  if (verb === undefined) return { kind: 'help', topic };
  if (isGroup(topic) && verbsOf(topic).includes(verb) && more.length === 0) {
    return { kind: 'help', topic };
  }
  const verbs = isGroup(topic)
    ? ` (${topic} takes ${[...new Set(verbsOf(topic))].join(', ')})`
    : '';
  throw new UsageError(`usage: lethe help [TOPIC]: no help for ${rest.join(' ')}${verbs}`);
}

/** The arguments of a command, exactly `count` of them. */
function exactly(count: number, words: string[], command: string): string[] {
  if (words.length === count) return words;
  const usage = COMMANDS.find((entry) => entry.usage.startsWith(`${command} `))?.usage ?? command;
  throw new UsageError(`usage: lethe ${usage}`);
}

/** `lethe health`, `lethe delete ...`, `lethe ingest ...` */
function topCommand(word: string, rest: string[]): Command {
  switch (word) {
    case 'health':
      exactly(0, rest, 'health');
      return { kind: 'health' };
    case 'delete':
      return {
        kind: 'streams.delete',
        ...streamRef(exactly(1, rest, 'delete')[0] ?? ''),
        wait: false,
      };
    case 'ingest': {
      const [ref = '', file = ''] = exactly(2, rest, 'ingest');
      return { kind: 'ingest', ...streamRef(ref), file };
    }
    case 'certificate-key':
      exactly(0, rest, 'certificate-key');
      return { kind: 'certificate-key' };
    case 'verify':
      return { kind: 'verify', file: exactly(1, rest, 'verify')[0] ?? '' };
    case 'smoke':
      exactly(0, rest, 'smoke');
      return { kind: 'smoke' };
    case 'seed':
      return {
        kind: 'seed',
        ...streamRef(exactly(1, rest, 'seed')[0] ?? ''),
        objects: 0,
        concurrency: 0,
      };
    default:
      throw new UsageError(`unknown command ${word}${suggestCommand(word)}`);
  }
}

/** `streams create` for `create`, otherwise the nearest top-level word. */
function suggestCommand(word: string): string {
  const inGroups = GROUPS.filter((group) => verbsOf(group).includes(word)).map(
    (group) => `${group} ${word}`,
  );
  if (inGroups.length > 0) return ` (did you mean ${inGroups.join(' or ')}?)`;
  return didYouMean(word, TOP_LEVEL);
}

/** `lethe GROUP VERB ...`, for the groups streams, deletions, plans, partitions and tenants. */
function groupCommand(group: Group, rest: string[]): Command {
  const [verb, ...words] = rest;
  if (verb === undefined) {
    throw new UsageError(`${group} needs a subcommand:\n${groupLines(group)}`);
  }
  const command = `${group} ${verb}`;
  const ref = () => streamRef(exactly(1, words, command)[0] ?? '');
  const tenant = () => name('tenant', exactly(1, words, command)[0] ?? '');
  const tenantAnd = () => {
    const [tenantName = '', id = ''] = exactly(2, words, command);
    return { tenant: name('tenant', tenantName), id };
  };
  const tenantAndId = () => {
    const { tenant, id } = tenantAnd();
    return { tenant, deletionId: deletionId(id) };
  };
  switch (command) {
    case 'streams create':
      return { kind: 'streams.create', ...ref() };
    case 'streams get':
      return { kind: 'streams.get', ...ref() };
    case 'streams list':
      return { kind: 'streams.list', tenant: tenant() };
    case 'streams delete':
      return { kind: 'streams.delete', ...ref(), wait: false };
    case 'deletions list':
      return { kind: 'deletions.list', tenant: tenant() };
    case 'deletions get':
      return { kind: 'deletions.get', ...tenantAndId() };
    case 'deletions cancel':
      return { kind: 'deletions.cancel', ...tenantAndId() };
    case 'deletions retry':
      return { kind: 'deletions.retry', ...tenantAndId(), wait: false };
    case 'deletions expedite':
      return { kind: 'deletions.expedite', ...tenantAndId(), wait: false };
    case 'deletions certificate':
      return { kind: 'deletions.certificate', ...tenantAndId() };
    case 'streams retention':
      return { kind: 'streams.retention', ...retentionOf(words) };
    case 'partitions delete':
      return { kind: 'partitions.delete', ...ref(), before: '', wait: false };
    case 'tenants delete':
      return { kind: 'tenants.delete', tenant: tenant(), wait: false };
    case 'tenants get':
      return { kind: 'tenants.get', tenant: tenant() };
    case 'tenants cancel':
      return { kind: 'tenants.cancel', tenant: tenant() };
    case 'plans get': {
      const { tenant, id } = tenantAnd();
      return { kind: 'plans.get', tenant, planId: planId(id) };
    }
    default: {
      const near = nearest(verb, verbsOf(group));
      const hint = near === undefined ? '' : ` (did you mean ${group} ${near}?)`;
      throw new UsageError(
        `unknown command ${command}${hint}; lethe ${group} takes:\n${groupLines(group)}`,
      );
    }
  }
}

/** `TENANT/STREAM DAYS`, or `TENANT/STREAM` alone (then `--off` must say so: see options.ts). */
function retentionOf(words: string[]) {
  const [ref, days, ...more] = words;
  if (ref === undefined || more.length > 0) {
    throw new UsageError(
      'usage: lethe streams retention TENANT/STREAM DAYS, or TENANT/STREAM --off to remove it',
    );
  }
  return { ...streamRef(ref), days: days === undefined ? ('off' as const) : retentionDays(days) };
}
