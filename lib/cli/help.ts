import { DEFAULT_STACK, LOCAL_ENDPOINT } from './endpoint.ts';
import { EXIT_MEANINGS } from './exit-codes.ts';

/** The command groups: `lethe streams ...` and `lethe deletions ...`. */
export const GROUPS = ['streams', 'deletions'] as const;
export type Group = (typeof GROUPS)[number];

/** One command as the help lists it. */
export interface CommandHelp {
  /** What follows `lethe`. */
  readonly usage: string;
  readonly summary: string;
}

/** Every command, in the order `lethe --help` lists them. */
export const COMMANDS: readonly CommandHelp[] = [
  {
    usage: 'streams create TENANT/STREAM',
    summary: 'create a stream (or show it if it is ACTIVE)',
  },
  { usage: 'streams get TENANT/STREAM', summary: 'show a stream' },
  {
    usage: 'streams list TENANT [--limit N] [--next-token T]',
    summary: "a tenant's streams, a page at a time",
  },
  {
    usage: 'streams delete TENANT/STREAM [--grace DURATION] [--wait]',
    summary: "request a stream's deletion",
  },
  {
    usage: 'delete TENANT/STREAM [--grace DURATION] [--wait]',
    summary: 'the same as streams delete',
  },
  {
    usage: 'ingest TENANT/STREAM FILE',
    summary: 'store a JSON array of events (FILE - reads stdin)',
  },
  {
    usage: 'deletions list TENANT [--state STATE] [--limit N] [--next-token T]',
    summary: "a tenant's deletions, newest first",
  },
  { usage: 'deletions get TENANT DELETION_ID', summary: 'show a deletion receipt' },
  {
    usage: 'deletions cancel TENANT DELETION_ID',
    summary: 'take back a SCHEDULED deletion: nothing is deleted',
  },
  {
    usage: 'deletions expedite TENANT DELETION_ID [--wait]',
    summary: 'start a SCHEDULED deletion now',
  },
  {
    usage: 'deletions retry TENANT DELETION_ID [--wait]',
    summary: 'start a FAILED deletion again',
  },
  { usage: 'health', summary: 'check that the API answers' },
  { usage: 'help [streams|deletions]', summary: "this help, or one group's commands" },
];

/** The words that may follow `lethe`: groups and commands of their own. */
export const TOP_LEVEL = [...new Set(COMMANDS.map((command) => firstWord(command.usage)))];

/** The subcommands of a group: `create`, `get`... for `streams`. */
export const verbsOf = (group: Group): string[] =>
  COMMANDS.filter((command) => firstWord(command.usage) === group).map(
    (command) => command.usage.split(' ')[1] ?? '',
  );

function firstWord(usage: string): string {
  return usage.split(' ')[0] ?? '';
}

const COLUMN = 42;

/** `  lethe USAGE  summary`, the summary on a line of its own when the usage is long. */
export function commandLines(commands: readonly CommandHelp[]): string {
  return commands
    .map(({ usage, summary }) => {
      const head = `  lethe ${usage}`;
      return head.length < COLUMN
        ? `${head.padEnd(COLUMN)}${summary}`
        : `${head}\n${' '.repeat(COLUMN)}${summary}`;
    })
    .join('\n');
}

/** The commands of one group, one line each: what a bare `lethe streams` lists. */
export function groupLines(group: Group): string {
  return commandLines(COMMANDS.filter((command) => firstWord(command.usage) === group));
}

/** `lethe help streams` */
export const groupHelp = (group: Group) => `lethe ${group} commands:\n${groupLines(group)}\n`;

/** `lethe --help` */
export const HELP = `lethe: drive Lethe, the S3 stream deletion service, from a terminal

Usage:
${commandLines(COMMANDS)}

Options:
  --grace DURATION  wait this long, cancellable, before deleting: 90s, 15m, 24h, 7d or plain
                    seconds, at most 30 days; 0 starts at once (default: the stack's setting)
  --wait            follow the deletion to its end: a countdown while it is SCHEDULED, then a
                    live progress bar on a terminal (objects deleted, objects/s once known), a
                    line every few seconds otherwise, then the receipt summary. Ctrl-C stops
                    waiting (exit 130); the deletion goes on
  --interval SECS   seconds between two reads of the receipt while waiting (default 1)
  --state STATE     deletions list: only deletions in this state (SCHEDULED, PENDING, RUNNING,
                    COMPLETED, FAILED, CANCELLED)
  --limit N         list at most N items (1 to 100, default 50)
  --next-token T    list the next page, as the previous page said
  --json            print the API's JSON response (the final receipt with --wait) and nothing
                    else on stdout; errors print the API's JSON error body
  --endpoint URL    the API (default: $LETHE_ENDPOINT, else the ApiUrl output of the deployed
                    stack, else ${LOCAL_ENDPOINT}, the local stack of npm start)
  --stack NAME      the CloudFormation stack to read ApiUrl from (default ${DEFAULT_STACK})
  --region REGION   region for the stack and for signing (default: the API's host name,
                    then AWS_REGION and the AWS profile)
  -h, --help        this help; lethe help streams (or deletions) lists one group

Requests to any endpoint that is not loopback are signed with SigV4 (service execute-api)
using the AWS SDK's default credential chain (environment, profile, SSO, role).

Exit codes:
${EXIT_MEANINGS.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`).join('\n')}
`;
