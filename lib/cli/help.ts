import { DEFAULT_STACK, LOCAL_ENDPOINT } from './endpoint.ts';
import { EXIT_MEANINGS } from './exit-codes.ts';

/** The command groups: `lethe streams ...`, `lethe deletions ...`, `lethe plans ...`... */
export const GROUPS = ['streams', 'deletions', 'plans', 'partitions', 'tenants'] as const;
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
    usage: 'streams delete TENANT/STREAM --dry-run',
    summary: 'count and estimate the deletion: deletes nothing',
  },
  {
    usage: 'streams retention TENANT/STREAM DAYS',
    summary: 'keep DAYS days of partitions, delete older daily',
  },
  {
    usage: 'streams retention TENANT/STREAM --off',
    summary: 'remove the retention policy (nothing is deleted)',
  },
  {
    usage: 'delete TENANT/STREAM [--grace DURATION] [--wait]',
    summary: 'the same as streams delete',
  },
  {
    usage: 'delete TENANT/STREAM --dry-run',
    summary: 'the same as streams delete --dry-run',
  },
  {
    usage: 'plans get TENANT PLAN_ID',
    summary: 'show a plan: its counts, its estimate once COMPLETED',
  },
  {
    usage: 'partitions delete TENANT/STREAM --before YYYY-MM-DD [--wait]',
    summary: 'delete old dt= partitions; the stream stays ACTIVE',
  },
  {
    usage: 'tenants delete TENANT [--grace DURATION] [--wait]',
    summary: 'offboard a tenant: every stream of it is deleted',
  },
  {
    usage: 'tenants get TENANT',
    summary: "show a tenant's offboarding: its streams, its deletions",
  },
  {
    usage: 'tenants cancel TENANT',
    summary: 'take back an offboarding in its grace window',
  },
  {
    usage: 'ingest TENANT/STREAM FILE',
    summary: 'store a JSON array of events (FILE - reads stdin)',
  },
  {
    usage: 'seed TENANT/STREAM [--objects N] [--concurrency C]',
    summary: 'store N small objects, to watch a large deletion',
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
  {
    usage: 'deletions certificate TENANT DELETION_ID [--out FILE]',
    summary: "a COMPLETED deletion's signed certificate (JSON)",
  },
  {
    usage: 'certificate-key [--key-id ID] [--out FILE]',
    summary: 'the public key (PEM) that verifies certificates',
  },
  {
    usage: 'verify FILE [--key PEM_FILE]',
    summary: "check a saved certificate's signature; --key: offline",
  },
  { usage: 'health', summary: 'check that the API answers' },
  {
    usage: 'smoke',
    summary: 'check a deployment end to end, then clean up after itself',
  },
  {
    usage: 'help [streams|deletions|plans|partitions|tenants]',
    summary: "this help, or one group's commands",
  },
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

/**
 * `lethe help TOPIC`, `lethe TOPIC --help`: a group's commands, or a command's forms (`delete`
 * has two), with where the rest is told.
 */
export function topicHelp(topic: string): string {
  if ((GROUPS as readonly string[]).includes(topic)) return groupHelp(topic as Group);
  const forms = COMMANDS.filter((command) => firstWord(command.usage) === topic);
  return `${commandLines(forms)}\n\nRun 'lethe --help' for every option, the endpoint and the exit codes.\n`;
}

/** `lethe --help` */
export const HELP = `lethe: drive Lethe, the S3 stream deletion service, from a terminal

Usage:
${commandLines(COMMANDS)}

Options:
  --grace DURATION  wait this long, cancellable, before deleting: 90s, 15m, 24h, 7d or plain
                    seconds, at most 30 days; 0 starts at once (default: the stack's setting).
                    tenants delete: every stream's deletion waits this long
  --wait            follow the deletion to its end: a countdown while it is SCHEDULED, then a
                    live progress bar on a terminal (objects deleted, objects/s once known), a
                    line every few seconds otherwise, then the receipt summary. Ctrl-C stops
                    waiting (exit 130); the deletion goes on. tenants delete: follow the
                    offboarding (streams taken in, deletions by state, objects deleted) until
                    it is COMPLETED (exit 0) or CANCELLED (exit 9)
  --dry-run         delete: delete nothing; count the objects, versions, delete markers, bytes
                    and uploads in progress, wait for the count (progress on stderr), then print
                    it with the estimate of the deletion: requests, cost, time. A FAILED plan
                    exits 1; Ctrl-C stops waiting (exit 130) and the plan goes on
  --before DAY      partitions delete: the dt= partitions of days strictly before DAY
                    (YYYY-MM-DD, not after today UTC) are deleted; the stream stays ACTIVE
  --off             streams retention: remove the policy instead of setting DAYS
  --objects N       seed: how many objects to store, 1 to 1,000,000 (default 1,000), each a
                    JSON array of one or two small events
  --concurrency C   seed: requests in flight at a time, 1 to 64 (default 16)
  --interval SECS   seconds between two reads of the receipt (or plan, or offboarding) while
                    waiting (default 1)
  --state STATE     deletions list: only deletions in this state (SCHEDULED, PENDING, RUNNING,
                    COMPLETED, FAILED, CANCELLED)
  --limit N         list at most N items (1 to 100, default 50)
  --next-token T    list the next page, as the previous page said
  --out FILE        deletions certificate, certificate-key: write to FILE instead of stdout
  --key-id ID       certificate-key: the key that signed a certificate (its keyId), not the
                    current one
  --key PEM_FILE    verify: check against this public key, offline: no request is sent
                    (without it, the API's key for the certificate's keyId; FILE - reads stdin)
  --json            print the API's JSON response (the final receipt, or offboarding, with
                    --wait; the final plan with --dry-run; for seed, {"objects","tenant",
                    "stream"}; for smoke, its steps and checks) and nothing else on stdout;
                    errors print the API's JSON error body
  --endpoint URL    the API (default: $LETHE_ENDPOINT, else the ApiUrl output of the deployed
                    stack, else ${LOCAL_ENDPOINT}, the local stack of npm start)
  --stack NAME      the CloudFormation stack to read ApiUrl from (default ${DEFAULT_STACK})
  --region REGION   region for the stack and for signing (default: the API's host name,
                    then AWS_REGION and the AWS profile)
  -h, --help        this help; lethe help streams (or deletions, plans, partitions, tenants)
                    lists one group
  --version         print lethe's version

Requests to any endpoint that is not loopback are signed with SigV4 (service execute-api)
using the AWS SDK's default credential chain (environment, profile, SSO, role).

Exit codes:
${EXIT_MEANINGS.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`).join('\n')}
`;
