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
  ['streams get acme/logs -h', { kind: 'help' }],
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
  ['streams create Acme/logs', 'tenant name must match ^[a-z0-9][a-z0-9_-]{0,62}$ (got "Acme")'],
  ['streams get acme/-logs', 'stream name must match ^[a-z0-9][a-z0-9_-]{0,62}$ (got "-logs")'],
  ['streams get acme', 'expected TENANT/STREAM, got "acme"'],
  ['streams get acme/logs/x', 'expected TENANT/STREAM, got "acme/logs/x"'],
  ['streams create', 'usage: lethe streams create TENANT/STREAM'],
  ['streams list acme/logs', 'tenant name must match ^[a-z0-9][a-z0-9_-]{0,62}$ (got "acme/logs")'],
  ['ingest acme/logs', 'usage: lethe ingest TENANT/STREAM FILE (a JSON array; - for stdin)'],
  ['deletions get acme', 'usage: lethe deletions get TENANT DELETION_ID'],
  ['streams purge acme/logs', 'unknown command: streams purge'],
  ['frobnicate', 'unknown command: frobnicate'],
  ['streams get acme/logs --wait', '--wait goes with delete, streams delete and deletions retry'],
  ['streams get acme/logs --limit 5', '--limit and --next-token go with streams list'],
  ['streams list acme --limit 0', '--limit must be an integer from 1 to 100 (got 0)'],
  ['streams list acme --limit 1.5', '--limit must be an integer from 1 to 100 (got 1.5)'],
  [
    'delete acme/logs --wait --interval 0',
    '--interval must be a number of seconds from 0.1 to 3600 (got 0)',
  ],
  ['health --verbose', "Unknown option '--verbose'"],
])('lethe %s', (line, message) => {
  it('is a usage error that says what is wrong', () => {
    // Act
    const parse = () => parseInvocation(line.split(' '));

    // Assess
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(message);
  });
});
