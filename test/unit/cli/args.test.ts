import { describe, expect, it } from 'vitest';
import { type Command, parseInvocation, UsageError } from '../../../lib/cli/args.ts';

const ID = '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';

describe.each<[string, Command]>([
  ['streams create acme/logs', { kind: 'streams.create', tenant: 'acme', stream: 'logs' }],
  ['streams get acme/logs-2_b', { kind: 'streams.get', tenant: 'acme', stream: 'logs-2_b' }],
  ['streams list acme', { kind: 'streams.list', tenant: 'acme' }],
  [
    'streams list acme --limit 10 --next-token abc',
    { kind: 'streams.list', tenant: 'acme', limit: 10, nextToken: 'abc' },
  ],
  [
    'streams delete acme/logs',
    { kind: 'streams.delete', tenant: 'acme', stream: 'logs', wait: false },
  ],
  [
    'delete acme/logs --wait',
    { kind: 'streams.delete', tenant: 'acme', stream: 'logs', wait: true },
  ],
  [
    'streams delete --wait acme/logs',
    { kind: 'streams.delete', tenant: 'acme', stream: 'logs', wait: true },
  ],
  [
    'ingest acme/logs events.json',
    { kind: 'ingest', tenant: 'acme', stream: 'logs', file: 'events.json' },
  ],
  ['ingest acme/logs -', { kind: 'ingest', tenant: 'acme', stream: 'logs', file: '-' }],
  [`deletions get acme ${ID}`, { kind: 'deletions.get', tenant: 'acme', deletionId: ID }],
  [
    `deletions retry acme ${ID} --wait`,
    { kind: 'deletions.retry', tenant: 'acme', deletionId: ID, wait: true },
  ],
  ['health', { kind: 'health' }],
  ['', { kind: 'help' }],
  ['--help', { kind: 'help' }],
  ['streams get acme/logs -h', { kind: 'help', topic: 'streams' }],
  ['health --help', { kind: 'help', topic: 'health' }],
  ['help', { kind: 'help' }],
  ['help streams', { kind: 'help', topic: 'streams' }],
  ['help deletions', { kind: 'help', topic: 'deletions' }],
  ['help ingest', { kind: 'help', topic: 'ingest' }],
  ['delete acme/logs --help', { kind: 'help', topic: 'delete' }],
  ['help help', { kind: 'help' }],
  ['help streams get', { kind: 'help', topic: 'streams' }],
  ['deletions --help', { kind: 'help', topic: 'deletions' }],
  [
    'delete acme/logs --grace 24h',
    { kind: 'streams.delete', tenant: 'acme', stream: 'logs', wait: false, graceSeconds: 86_400 },
  ],
  [
    'streams delete acme/logs --grace 0 --wait',
    { kind: 'streams.delete', tenant: 'acme', stream: 'logs', wait: true, graceSeconds: 0 },
  ],
  [`deletions cancel acme ${ID}`, { kind: 'deletions.cancel', tenant: 'acme', deletionId: ID }],
  [
    `deletions expedite acme ${ID}`,
    { kind: 'deletions.expedite', tenant: 'acme', deletionId: ID, wait: false },
  ],
  [
    `deletions expedite acme ${ID} --wait`,
    { kind: 'deletions.expedite', tenant: 'acme', deletionId: ID, wait: true },
  ],
  ['deletions list acme', { kind: 'deletions.list', tenant: 'acme' }],
  [
    'deletions list acme --state failed --limit 5 --next-token abc',
    { kind: 'deletions.list', tenant: 'acme', state: 'FAILED', limit: 5, nextToken: 'abc' },
  ],
  ['delete acme/logs --dry-run', { kind: 'plans.create', tenant: 'acme', stream: 'logs' }],
  ['streams delete --dry-run acme/logs', { kind: 'plans.create', tenant: 'acme', stream: 'logs' }],
  [`plans get acme ${ID}`, { kind: 'plans.get', tenant: 'acme', planId: ID }],
  ['help plans', { kind: 'help', topic: 'plans' }],
  [
    `deletions certificate acme ${ID}`,
    { kind: 'deletions.certificate', tenant: 'acme', deletionId: ID },
  ],
  [
    `deletions certificate acme ${ID} --out cert.json`,
    { kind: 'deletions.certificate', tenant: 'acme', deletionId: ID, out: 'cert.json' },
  ],
  ['certificate-key', { kind: 'certificate-key' }],
  [
    'certificate-key --key-id arn:aws:kms:eu-west-1:1:key/k --out key.pem',
    { kind: 'certificate-key', keyId: 'arn:aws:kms:eu-west-1:1:key/k', out: 'key.pem' },
  ],
  ['verify cert.json', { kind: 'verify', file: 'cert.json' }],
  ['verify - --key key.pem', { kind: 'verify', file: '-', key: 'key.pem' }],
  [
    'seed acme/logs',
    { kind: 'seed', tenant: 'acme', stream: 'logs', objects: 1_000, concurrency: 16 },
  ],
  [
    'seed acme/logs --objects 1000000 --concurrency 64',
    { kind: 'seed', tenant: 'acme', stream: 'logs', objects: 1_000_000, concurrency: 64 },
  ],
  [
    'seed --objects 1 --concurrency 1 acme/logs',
    { kind: 'seed', tenant: 'acme', stream: 'logs', objects: 1, concurrency: 1 },
  ],
  [
    'partitions delete acme/logs --before 2026-11-01',
    {
      kind: 'partitions.delete',
      tenant: 'acme',
      stream: 'logs',
      before: '2026-11-01',
      wait: false,
    },
  ],
  [
    'partitions delete --wait acme/logs --before 2024-02-29',
    { kind: 'partitions.delete', tenant: 'acme', stream: 'logs', before: '2024-02-29', wait: true },
  ],
  [
    'streams retention acme/logs 30',
    { kind: 'streams.retention', tenant: 'acme', stream: 'logs', days: 30 },
  ],
  [
    'streams retention acme/logs 36500',
    { kind: 'streams.retention', tenant: 'acme', stream: 'logs', days: 36_500 },
  ],
  [
    'streams retention acme/logs --off',
    { kind: 'streams.retention', tenant: 'acme', stream: 'logs', days: 'off' },
  ],
  ['help partitions', { kind: 'help', topic: 'partitions' }],
  ['partitions --help', { kind: 'help', topic: 'partitions' }],
  ['help seed', { kind: 'help', topic: 'seed' }],
  ['tenants delete acme', { kind: 'tenants.delete', tenant: 'acme', wait: false }],
  [
    'tenants delete acme --grace 7d --wait',
    { kind: 'tenants.delete', tenant: 'acme', wait: true, graceSeconds: 604_800 },
  ],
  [
    'tenants delete --grace 1h30m acme',
    { kind: 'tenants.delete', tenant: 'acme', wait: false, graceSeconds: 5_400 },
  ],
  [
    'tenants delete acme --grace 0',
    { kind: 'tenants.delete', tenant: 'acme', wait: false, graceSeconds: 0 },
  ],
  ['tenants get acme', { kind: 'tenants.get', tenant: 'acme' }],
  ['tenants cancel acme', { kind: 'tenants.cancel', tenant: 'acme' }],
  ['help tenants', { kind: 'help', topic: 'tenants' }],
  ['tenants --help', { kind: 'help', topic: 'tenants' }],
])('lethe %s', (line, command) => {
  it('parses to the command', () => {
    // Act
    const invocation = parseInvocation(line.split(' ').filter(Boolean));

    // Assess
    expect(invocation.command).toEqual(command);
  });
});

describe('global options', () => {
  it('reads endpoint, stack, region, json and the wait interval', () => {
    // Act
    const { options } = parseInvocation([
      'streams',
      'get',
      'acme/logs',
      '--endpoint',
      'https://api.example.com/prod',
      '--stack',
      'LetheStaging',
      '--region',
      'eu-west-1',
      '--json',
      '--interval',
      '0.5',
    ]);

    // Assess
    expect(options).toEqual({
      endpoint: 'https://api.example.com/prod',
      stack: 'LetheStaging',
      region: 'eu-west-1',
      json: true,
      intervalMs: 500,
    });
  });

  it('defaults to human output and one read a second', () => {
    // Act
    const { options } = parseInvocation(['health']);

    // Assess
    expect(options).toEqual({ json: false, intervalMs: 1000 });
  });
});

describe.each<[string, string]>([
  [
    'streams create Acme/logs',
    'tenant name must be lowercase letters, digits, - and _, 1 to 63 characters, starting with a letter or digit (got "Acme": "A" is not allowed)',
  ],
  [
    'streams get acme/-logs',
    'stream name must be lowercase letters, digits, - and _, 1 to 63 characters, starting with a letter or digit (got "-logs": it starts with -)',
  ],
  [
    'streams get /logs',
    'tenant name must be lowercase letters, digits, - and _, 1 to 63 characters, starting with a letter or digit (got "", an empty name)',
  ],
  [`streams get acme/${'a'.repeat(64)}`, 'stream name is too long: 64 characters, at most 63'],
  [`delete ${'t'.repeat(80)}/logs`, 'tenant name is too long: 80 characters, at most 63'],
  ['streams get acme', 'expected TENANT/STREAM, got "acme"'],
  ['streams get acme/logs/x', 'expected TENANT/STREAM, got "acme/logs/x"'],
  ['streams create', 'usage: lethe streams create TENANT/STREAM'],
  ['streams list acme/logs', '(got "acme/logs": "/" is not allowed)'],
  ['ingest acme/logs', 'usage: lethe ingest TENANT/STREAM FILE'],
  ['deletions get acme', 'usage: lethe deletions get TENANT DELETION_ID'],
  ['deletions cancel acme x y', 'usage: lethe deletions cancel TENANT DELETION_ID'],
  ['deletions get acme 42', 'DELETION_ID must be a lowercase UUID (got "42")'],
  [
    'streams purge acme/logs',
    'unknown command streams purge; lethe streams takes:\n  lethe streams create',
  ],
  ['streams lsit acme', 'unknown command streams lsit (did you mean streams list?)'],
  ['deletions cancle acme', 'unknown command deletions cancle (did you mean deletions cancel?)'],
  ['frobnicate', 'unknown command frobnicate'],
  ['strems list acme', 'unknown command strems (did you mean streams?)'],
  ['delet acme/logs', 'unknown command delet (did you mean delete?)'],
  ['cancel acme', 'unknown command cancel (did you mean deletions cancel or tenants cancel?)'],
  ['list acme', 'unknown command list (did you mean streams list or deletions list?)'],
  ['help frob', 'unknown help topic frob'],
  ['help stream', 'unknown help topic stream (did you mean streams?)'],
  [
    'help streams extra',
    'usage: lethe help [TOPIC]: no help for streams extra (streams takes create, get, list, delete, retention)',
  ],
  ['help streams get more', 'usage: lethe help [TOPIC]: no help for streams get more'],
  [
    'streams bogus --help',
    'usage: lethe help [TOPIC]: no help for streams bogus (streams takes create, get, list, delete, retention)',
  ],
  ['help health now', 'usage: lethe help [TOPIC]: no help for health now'],
  ['help help streams', 'usage: lethe help [TOPIC]: no help for help streams'],
  ['streams', 'streams needs a subcommand:\n  lethe streams create TENANT/STREAM'],
  ['deletions', 'deletions needs a subcommand:\n  lethe deletions list TENANT'],
  [
    'streams get acme/logs --wait',
    '--wait goes with delete, streams delete, deletions retry, deletions expedite, partitions delete and tenants delete',
  ],
  ['seed acme/logs --objects 0', '--objects must be an integer from 1 to 1,000,000 (got 0)'],
  ['seed acme/logs --objects 1000001', '--objects must be an integer from 1 to 1,000,000'],
  ['seed acme/logs --objects 1e3', '--objects must be an integer from 1 to 1,000,000 (got 1e3)'],
  ['seed acme/logs --concurrency 65', '--concurrency must be an integer from 1 to 64 (got 65)'],
  ['seed acme/logs --concurrency 0', '--concurrency must be an integer from 1 to 64 (got 0)'],
  ['seed acme', 'expected TENANT/STREAM, got "acme"'],
  ['seed', 'usage: lethe seed TENANT/STREAM [--objects N] [--concurrency C]'],
  ['seed acme/logs --wait', '--wait goes with'],
  ['streams create acme/logs --objects 5', '--objects goes with seed'],
  ['health --concurrency 5', '--concurrency goes with seed'],
  [
    'partitions delete acme/logs',
    'partitions delete needs --before YYYY-MM-DD: the partitions of days strictly before it are deleted',
  ],
  [
    'partitions delete acme/logs --before 2026-13-01',
    '--before must be a day, YYYY-MM-DD (got "2026-13-01")',
  ],
  ['partitions delete acme/logs --before 2026-02-29', '(got "2026-02-29")'],
  ['partitions delete acme/logs --before 2026-1-5', '(got "2026-1-5")'],
  ['partitions delete acme/logs --before yesterday', '(got "yesterday")'],
  ['partitions delete acme --before 2026-01-01', 'expected TENANT/STREAM, got "acme"'],
  ['delete acme/logs --before 2026-01-01', '--before goes with partitions delete'],
  ['partitions', 'partitions needs a subcommand:\n  lethe partitions delete TENANT/STREAM'],
  ['partitions purge acme/logs', 'unknown command partitions purge; lethe partitions takes:'],
  ['partitions delte acme/logs', '(did you mean partitions delete?)'],
  ['partition delete acme/logs', 'unknown command partition (did you mean partitions?)'],
  [
    'streams retention acme/logs 0',
    'DAYS must be a whole number of days from 1 to 36,500 (got "0")',
  ],
  ['streams retention acme/logs 36501', '(got "36501")'],
  ['streams retention acme/logs 1.5', '(got "1.5")'],
  ['streams retention acme/logs 30d', '(got "30d")'],
  [
    'streams retention acme/logs',
    'usage: lethe streams retention TENANT/STREAM DAYS, or TENANT/STREAM --off to remove it',
  ],
  ['streams retention', 'usage: lethe streams retention TENANT/STREAM DAYS'],
  ['streams retention acme/logs 30 40', 'usage: lethe streams retention TENANT/STREAM DAYS'],
  [
    'streams retention acme/logs 30 --off',
    '--off removes the retention policy: give DAYS or --off, not both',
  ],
  ['streams get acme/logs --off', '--off goes with streams retention'],
  ['retention acme/logs 30', 'unknown command retention (did you mean streams retention?)'],
  ['streams get acme/logs --limit 5', '--limit goes with streams list and deletions list'],
  [
    `deletions get acme ${ID} --next-token x`,
    '--next-token goes with streams list and deletions list',
  ],
  ['streams list acme --state FAILED', '--state goes with deletions list'],
  [
    `deletions retry acme ${ID} --grace 1h`,
    '--grace goes with delete, streams delete and tenants delete',
  ],
  ['tenants', 'tenants needs a subcommand:\n  lethe tenants delete TENANT'],
  [
    'tenants purge acme',
    'unknown command tenants purge; lethe tenants takes:\n  lethe tenants delete',
  ],
  ['tenants cancle acme', 'unknown command tenants cancle (did you mean tenants cancel?)'],
  ['tenant delete acme', 'unknown command tenant (did you mean tenants?)'],
  ['tenants delete', 'usage: lethe tenants delete TENANT [--grace DURATION] [--wait]'],
  ['tenants delete acme/logs', 'tenant name must be'],
  ['tenants get acme beta', 'usage: lethe tenants get TENANT'],
  ['tenants cancel', 'usage: lethe tenants cancel TENANT'],
  ['tenants delete Acme', 'tenant name must be'],
  ['tenants delete acme --grace 31d', '--grace must be at most 30 days'],
  ['tenants delete acme --dry-run', '--dry-run goes with delete and streams delete'],
  ['tenants get acme --wait', '--wait goes with'],
  ['tenants cancel acme --grace 1h', '--grace goes with delete, streams delete and tenants delete'],
  [
    'deletions list acme --state DONE',
    '--state must be one of SCHEDULED, PENDING, RUNNING, COMPLETED, FAILED, CANCELLED (got DONE)',
  ],
  ['deletions list acme --state runing', '(got runing) (did you mean RUNNING?)'],
  ['deletions list acme --limit 101', '--limit must be an integer from 1 to 100 (got 101)'],
  [
    'delete acme/logs --grace soon',
    '--grace must be a duration such as 90s, 15m, 24h or 7d, or a number of seconds (got "soon")',
  ],
  [
    'delete acme/logs --grace 31d',
    '--grace must be at most 30 days (2,592,000 seconds); 31d is 2,678,400 seconds',
  ],
  ['delete acme/logs --grace 2592001', '2592001 is 2,592,001 seconds'],
  ['streams list acme --limit 0', '--limit must be an integer from 1 to 100 (got 0)'],
  ['streams list acme --limit 1.5', '--limit must be an integer from 1 to 100 (got 1.5)'],
  [
    'delete acme/logs --wait --interval 0',
    '--interval must be a number of seconds from 0.1 to 3600 (got 0)',
  ],
  // Number() reads these as 16 and 10: an interval is written in decimal.
  ['delete acme/logs --wait --interval 0x10', '(got 0x10)'],
  ['delete acme/logs --wait --interval 1e1', '(got 1e1)'],
  [
    'delete acme/logs --dry-run --grace 1h',
    '--dry-run does not go with --grace: a dry run deletes nothing, so there is no grace window to give it',
  ],
  [
    'streams delete acme/logs --dry-run --wait',
    '--dry-run does not go with --wait: a dry run deletes nothing; it waits for its plan on its own',
  ],
  [`deletions get acme ${ID} --dry-run`, '--dry-run goes with delete and streams delete'],
  ['plans get acme', 'usage: lethe plans get TENANT PLAN_ID'],
  ['plans get acme 42', 'PLAN_ID must be a lowercase UUID (got "42")'],
  ['plans', 'plans needs a subcommand:\n  lethe plans get TENANT PLAN_ID'],
  ['plans list acme', 'unknown command plans list; lethe plans takes:\n  lethe plans get'],
  ['deletions certificate acme', 'usage: lethe deletions certificate TENANT DELETION_ID'],
  ['certificate acme', 'unknown command certificate (did you mean deletions certificate?)'],
  ['certificate-key now', 'usage: lethe certificate-key [--key-id ID] [--out FILE]'],
  ['verify', 'usage: lethe verify FILE [--key PEM_FILE]'],
  ['verify a.json b.json', 'usage: lethe verify FILE [--key PEM_FILE]'],
  ['verfy a.json', 'unknown command verfy (did you mean verify?)'],
  ['streams get acme/logs --out x', '--out goes with deletions certificate and certificate-key'],
  ['verify a.json --key-id k', '--key-id goes with certificate-key'],
  ['certificate-key --key k.pem', '--key goes with verify'],
  ['health --verbose', 'unknown option --verbose'],
  ['streams list acme --limt 5', 'unknown option --limt (did you mean --limit?)'],
  ['streams list acme --nexttoken x', 'unknown option --nexttoken (did you mean --next-token?)'],
  ['delete acme/logs --wiat', 'unknown option --wiat (did you mean --wait?)'],
  ['health -x', 'unknown option -x'],
  ['streams list acme --limit', 'option --limit needs a value'],
  ['health --json=yes', 'option --json takes no value'],
  [
    'streams list acme --limit -1',
    'option --limit needs a value; to give one that starts with -, write --limit=VALUE',
  ],
  ['delete acme/logs --grace -5', 'option --grace needs a value; to give one that starts with -'],
  // The last one was taken, silently: a grace of 0 deletes at once.
  [
    'delete acme/logs --grace 7d --grace 0',
    '--grace is given twice ("7d", then "0"): give it once',
  ],
  ['streams list acme --limit=5 --limit 6', '--limit is given twice ("5", then "6"): give it once'],
  [
    'health --endpoint http://127.0.0.1:3000 --endpoint http://127.0.0.1:4000',
    '--endpoint is given twice',
  ],
])('lethe %s', (line, message) => {
  it('is a usage error that says what is wrong', () => {
    // Act
    const parse = () => parseInvocation(line.split(' '));

    // Assess
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(message);
  });
});

describe.each<[string[], string]>([
  [['certificate-key', '--key-id', ' '], '--key-id needs the keyId of a certificate'],
  [['certificate-key', '--out', ''], '--out needs a file name'],
  [['verify', 'c.json', '--key', ''], '--key needs a file name'],
])('lethe %j', (argv, message) => {
  it('is a usage error: an empty value names nothing', () => {
    expect(() => parseInvocation(argv)).toThrow(message);
  });
});

describe('an unknown option', () => {
  it('names no option when none is near', () => {
    // Act
    const parse = () => parseInvocation(['health', '--verbose']);

    // Assess
    expect(parse).toThrow(/^unknown option --verbose$/);
  });
});

describe('a name', () => {
  it('may be 63 characters long, the longest NAME_PATTERN allows', () => {
    // Prepare
    const longest = `a${'-'.repeat(61)}z`;

    // Act
    const { command } = parseInvocation(['streams', 'get', `acme/${longest}`]);

    // Assess
    expect(command).toEqual({ kind: 'streams.get', tenant: 'acme', stream: longest });
  });

  it.each(['0logs', 'a_b-c', 'x'])('%s is valid', (stream) => {
    expect(parseInvocation(['streams', 'get', `acme/${stream}`]).command).toMatchObject({ stream });
  });
});

describe('--grace', () => {
  it.each<[string, number]>([
    ['90s', 90],
    ['15m', 900],
    ['24h', 86_400],
    ['7d', 604_800],
    ['1h30m', 5_400],
    ['3600', 3_600],
    ['0', 0],
    ['30d', 2_592_000],
    ['2592000', 2_592_000],
  ])('%s is %i seconds', (grace, seconds) => {
    // Act
    const { command } = parseInvocation(['delete', 'acme/logs', '--grace', grace]);

    // Assess
    expect(command).toMatchObject({ kind: 'streams.delete', graceSeconds: seconds });
  });

  it.each(['', '1.5h', '-5', '10y', 'h', '5 m'])('refuses %j', (grace) => {
    expect(() => parseInvocation(['delete', 'acme/logs', '--grace', grace])).toThrow(UsageError);
  });
});
