import { describe, expect, it } from 'vitest';
import { describeStream, receiptSummary } from '../../../lib/cli/format.ts';
import { run } from '../../../lib/cli/main.ts';
import { toStreamView } from '../../../lib/core/index.ts';
import {
  apiError,
  aReceipt,
  cliDependencies,
  type FakeReply,
  fakeFetch,
  LOCAL,
  lethe,
  line,
} from '../../helpers/cli.ts';
import { aStream, DELETION_ID } from '../../helpers/records.ts';

const BASE = 'http://127.0.0.1:3000/v1/tenants/acme';
const BEFORE = '2026-11-01';
const partitionReceipt = (overrides: Parameters<typeof aReceipt>[0] = {}) =>
  aReceipt({ before: BEFORE, ...overrides });

describe('lethe partitions delete', () => {
  it('asks for the deletion of the partitions before the day and says how to follow it', async () => {
    // Act
    const result = await lethe(['partitions', 'delete', 'acme/logs', '--before', BEFORE], () => ({
      status: 202,
      body: partitionReceipt({ state: 'PENDING', attempts: 0 }),
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([
      `DELETE ${BASE}/streams/logs/partitions?before=${BEFORE}`,
    ]);
    expect(result.stdout).toBe(
      `PENDING acme/logs partitions before ${BEFORE}: 0 objects (0 B) deleted so far (deletion ${DELETION_ID}, attempts 0)\n` +
        `follow it: lethe deletions get acme ${DELETION_ID}\n`,
    );
  });

  it('with --wait follows it to COMPLETED with the progress of delete --wait', async () => {
    // Prepare
    const reads = [
      partitionReceipt({ state: 'RUNNING', objectsDeleted: 600, bytesDeleted: 6_000 }),
      partitionReceipt({
        state: 'COMPLETED',
        objectsDeleted: 1_200,
        bytesDeleted: 12_288,
        completedAt: '2026-03-01T11:00:08.000Z',
      }),
    ];
    const api = fakeFetch((request) =>
      request.method === 'DELETE'
        ? { status: 202, body: partitionReceipt({ state: 'PENDING' }) }
        : { status: 200, body: reads.shift() },
    );
    const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(
      [
        'partitions',
        'delete',
        'acme/logs',
        '--before',
        BEFORE,
        '--wait',
        '--interval',
        '2',
        ...LOCAL,
      ],
      deps,
    );

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map(line)).toEqual([
      `DELETE ${BASE}/streams/logs/partitions?before=${BEFORE}`,
      `GET ${BASE}/deletions/${DELETION_ID}`,
      `GET ${BASE}/deletions/${DELETION_ID}`,
    ]);
    expect(stderr.text()).toBe(
      [
        'lethe: PENDING, 0 objects deleted, elapsed 0s',
        'lethe: RUNNING, 600 objects deleted, 300 objects/s, elapsed 2s',
        `lethe: COMPLETED, 1,200 objects deleted, 300 objects/s, elapsed 4s, deletion ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
    expect(stdout.text()).toBe(
      `COMPLETED acme/logs partitions before ${BEFORE}: 1,200 objects (12.0 KiB) deleted in 8s, those partitions verified empty (deletion ${DELETION_ID}, attempts 1)\n`,
    );
  });

  it('exits 5 when it ends FAILED', async () => {
    // Act
    const result = await lethe(
      ['partitions', 'delete', 'acme/logs', '--before', BEFORE, '--wait'],
      (request) =>
        request.method === 'DELETE'
          ? { status: 202, body: partitionReceipt({ state: 'PENDING' }) }
          : { status: 200, body: partitionReceipt({ state: 'FAILED', failedObjects: 1 }) },
    );

    // Assess
    expect(result.code).toBe(5);
    expect(result.stdout).toMatch(/^FAILED acme\/logs partitions before 2026-11-01: /);
  });

  it('sends nothing for a malformed --before, and exits 2', async () => {
    // Act
    const result = await lethe(
      ['partitions', 'delete', 'acme/logs', '--before', '2026-11-31'],
      () => ({ status: 202, body: partitionReceipt() }),
    );

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
    expect(result.stderr).toBe(
      `lethe: --before must be a day, YYYY-MM-DD (got "2026-11-31")\nRun 'lethe --help' for usage.\n`,
    );
  });

  it.each<[string, FakeReply, number, string]>([
    [
      'a cutoff after today',
      apiError(
        400,
        'InvalidCutoff',
        'before must not be after today, 2026-12-01 UTC (got 2026-12-02)',
      ),
      7,
      'lethe: InvalidCutoff: before must not be after today, 2026-12-01 UTC (got 2026-12-02) (HTTP 400)\n',
    ],
    [
      'a stream being deleted',
      apiError(409, 'StreamDeleting', 'stream acme/logs is being deleted'),
      4,
      'lethe: StreamDeleting: stream acme/logs is being deleted (HTTP 409)\n',
    ],
    [
      'a partition deletion with another cutoff under way',
      apiError(
        409,
        'PartitionDeletionInProgress',
        `a deletion of the partitions of acme/logs before 2026-01-15 is under way (deletion ${DELETION_ID}); retry when it has ended`,
      ),
      4,
      `lethe: PartitionDeletionInProgress: a deletion of the partitions of acme/logs before 2026-01-15 is under way (deletion ${DELETION_ID}); retry when it has ended (HTTP 409)\n` +
        `follow it: lethe deletions get acme ${DELETION_ID}\n`,
    ],
    [
      'a stream that does not exist',
      apiError(404, 'StreamNotFound', 'stream acme/logs does not exist'),
      3,
      'lethe: StreamNotFound: stream acme/logs does not exist (HTTP 404)\n',
    ],
  ])('exits %#: %s', async (_, reply, exit, said) => {
    // Act
    const result = await lethe(
      ['partitions', 'delete', 'acme/logs', '--before', '2026-12-02'],
      () => reply,
    );

    // Assess
    expect(result.code).toBe(exit);
    expect(result.stderr).toBe(said);
  });
});

describe('lethe streams retention', () => {
  const withRetention = toStreamView(aStream({ retentionDays: 30 }));

  it('puts the policy and says what it keeps', async () => {
    // Act
    const result = await lethe(['streams', 'retention', 'acme/logs', '30'], () => ({
      status: 200,
      body: withRetention,
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent).toEqual([
      {
        method: 'PUT',
        url: `${BASE}/streams/logs/retention`,
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: '{"days":30}',
      },
    ]);
    expect(result.stdout).toBe(
      'acme/logs keeps 30 days of partitions; older ones are deleted every day\n',
    );
  });

  it('says a single day in good English, and prints the stream with --json', async () => {
    // Prepare
    const oneDay = toStreamView(aStream({ retentionDays: 1 }));

    // Act
    const human = await lethe(['streams', 'retention', 'acme/logs', '1'], () => ({
      status: 200,
      body: oneDay,
    }));
    const json = await lethe(['streams', 'retention', 'acme/logs', '1', '--json'], () => ({
      status: 200,
      body: oneDay,
    }));

    // Assess
    expect(human.stdout).toBe(
      'acme/logs keeps 1 day of partitions; older ones are deleted every day\n',
    );
    expect(JSON.parse(json.stdout)).toEqual(oneDay);
  });

  it('--off deletes the policy and says nothing goes for its age', async () => {
    // Act
    const result = await lethe(['streams', 'retention', 'acme/logs', '--off'], () => ({
      status: 200,
      body: toStreamView(aStream()),
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`DELETE ${BASE}/streams/logs/retention`]);
    expect(result.stdout).toBe(
      'acme/logs has no retention policy: its partitions are kept until deleted\n',
    );
  });

  it('sends nothing for DAYS out of range, and exits 2', async () => {
    // Act
    const result = await lethe(['streams', 'retention', 'acme/logs', '40000'], () => ({
      status: 200,
      body: withRetention,
    }));

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
  });

  it('exits 4 for a stream being deleted', async () => {
    // Act
    const result = await lethe(['streams', 'retention', 'acme/logs', '7'], () =>
      apiError(409, 'StreamDeleting', 'stream acme/logs is being deleted'),
    );

    // Assess
    expect(result.code).toBe(4);
  });
});

describe('a stream with partitions', () => {
  it('shows its retention and the partition deletion under way', () => {
    // Prepare
    const view = toStreamView(aStream({ retentionDays: 30, partitionDeletionId: DELETION_ID }));

    // Act
    const text = describeStream(view);

    // Assess
    expect(text).toBe(
      [
        'stream      acme/logs',
        'state       ACTIVE',
        'generation  1',
        'location    s3://lethe-data/streams/acme/logs/1/',
        'created     2026-02-01T00:00:00.000Z',
        'retention   30 days',
        `partitions  deletion ${DELETION_ID} under way`,
        '',
      ].join('\n'),
    );
  });

  it('shows neither without them', () => {
    expect(describeStream(toStreamView(aStream()))).not.toMatch(/retention|partitions/);
  });

  it('has a receipt that names the cutoff instead of the generation', () => {
    // Prepare
    const running = partitionReceipt({ state: 'RUNNING', objectsDeleted: 1_500 });
    const cancelled = partitionReceipt({
      state: 'CANCELLED',
      cancelledAt: '2026-03-01T11:00:01.000Z',
    });

    // Act & Assess
    expect(receiptSummary(running)).toBe(
      `RUNNING acme/logs partitions before ${BEFORE}: 1,500 objects (0 B) deleted so far (deletion ${DELETION_ID}, attempts 1)\n`,
    );
    expect(receiptSummary(cancelled)).toMatch(
      /^CANCELLED acme\/logs partitions before 2026-11-01 at 2026-03-01T11:00:01.000Z: nothing was deleted /,
    );
    expect(receiptSummary(aReceipt({ state: 'COMPLETED' }))).toContain(
      'acme/logs generation 1: 0 objects (0 B) deleted, location verified empty',
    );
  });

  it('counts one object as one, and a deletion of less than a second in tenths', () => {
    // Prepare: requested at 11:00:00.000, completed 480 ms later.
    const quick = aReceipt({
      state: 'COMPLETED',
      objectsDeleted: 1,
      bytesDeleted: 18,
      requestedAt: '2026-03-01T11:00:00.000Z',
      completedAt: '2026-03-01T11:00:00.480Z',
    });

    // Act & Assess
    expect(receiptSummary(quick)).toContain(
      'acme/logs generation 1: 1 object (18 B) deleted in 0.5s, location verified empty',
    );
  });
});
