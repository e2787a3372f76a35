import { describe, expect, it } from 'vitest';
import { ApiError, type LetheClient, UnreachableError } from '../../../lib/cli/client.ts';
import { run } from '../../../lib/cli/main.ts';
import { bytesExactly, formatUsd, planSummary } from '../../../lib/cli/plan-format.ts';
import { PlanReporter, waitForPlan } from '../../../lib/cli/plans.ts';
import type { PlanView } from '../../../lib/core/index.ts';
import {
  apiError,
  cliDependencies,
  ctrlC,
  type FakeReply,
  fakeFetch,
  LOCAL,
  lethe,
  line,
  memoryOutput,
} from '../../helpers/cli.ts';

const PLAN_ID = '9a8b7c6d-1e2f-4a3b-8c9d-0e1f2a3b4c5d';
const PLANS = 'http://127.0.0.1:3000/v1/tenants/acme/plans';

/** A plan as the API answers it: PENDING and empty unless told otherwise. */
function aPlan(overrides: Partial<PlanView> = {}): PlanView {
  return {
    planId: PLAN_ID,
    tenant: 'acme',
    stream: 'logs',
    generation: 1,
    location: 's3://lethe-data/streams/acme/logs/1/',
    state: 'PENDING',
    objects: 0,
    bytes: 0,
    versions: 0,
    deleteMarkers: 0,
    multipartUploads: 0,
    estimate: {
      s3Requests: 3,
      sqsMessages: 1,
      dynamodbWrites: 8,
      lambdaGbSeconds: 0,
      costUsd: 0.000015,
      seconds: 1,
    },
    requestedAt: '2026-03-01T12:00:00.000Z',
    ...overrides,
  };
}

/** A COMPLETED plan of 8,000 objects in 8,200 versions, with its estimate. */
const COMPLETED = aPlan({
  state: 'COMPLETED',
  objects: 8_000,
  bytes: 174_899,
  versions: 8_200,
  deleteMarkers: 150,
  multipartUploads: 2,
  estimate: {
    s3Requests: 21,
    sqsMessages: 10,
    dynamodbWrites: 51,
    lambdaGbSeconds: 7.774,
    costUsd: 0.000246,
    seconds: 4,
  },
  completedAt: '2026-03-01T12:00:09.000Z',
});

const COMPLETED_SUMMARY = [
  `COMPLETED plan of acme/logs generation 1 (plan ${PLAN_ID})`,
  'location             s3://lethe-data/streams/acme/logs/1/',
  'objects              8,000',
  'versions             8,200',
  'delete markers       150',
  'bytes                170.8 KiB (174,899 bytes)',
  'uploads in progress  2',
  'the deletion would take:',
  '  S3 requests      21',
  '  SQS messages     10',
  '  DynamoDB writes  51',
  '  Lambda           7.774 GB-s',
  '  cost             0.000246 USD',
  "  time             about 4s at the stack's worker concurrency",
  'nothing was deleted; to delete: lethe delete acme/logs',
  '',
].join('\n');

const ok = (body: PlanView, status = 200): FakeReply => ({ status, body });

/** The POST answers a PENDING plan; each read answers the next of `reads`. */
function planning(reads: PlanView[]) {
  return fakeFetch((request) =>
    request.method === 'POST' ? ok(aPlan(), 202) : ok(reads.shift() ?? COMPLETED),
  );
}

describe('lethe delete --dry-run', () => {
  it('requests a plan, reads it every interval until COMPLETED, then prints the summary', async () => {
    // Arrange
    const api = planning([aPlan({ state: 'RUNNING', objects: 1_200, bytes: 26_000 }), COMPLETED]);
    const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(['delete', 'acme/logs', '--dry-run', '--interval', '2', ...LOCAL], deps);

    // Assess
    expect(code).toBe(0);
    expect(api.sent.map(line)).toEqual([
      'POST http://127.0.0.1:3000/v1/tenants/acme/streams/logs/plans',
      `GET ${PLANS}/${PLAN_ID}`,
      `GET ${PLANS}/${PLAN_ID}`,
    ]);
    expect(stderr.text()).toBe(
      [
        'lethe: PENDING, 0 objects counted (0 B), elapsed 0s',
        'lethe: RUNNING, 1,200 objects counted (25.4 KiB), elapsed 2s',
        `lethe: COMPLETED, 8,000 objects counted (170.8 KiB), elapsed 4s, plan ${PLAN_ID}`,
        '',
      ].join('\n'),
    );
    expect(stdout.text()).toBe(COMPLETED_SUMMARY);
  });

  it('sends no DELETE: a dry run is a POST to the plans route, then reads', async () => {
    // Act
    const result = await lethe(['streams', 'delete', 'acme/logs', '--dry-run'], (request) =>
      request.method === 'POST' ? ok(aPlan(), 202) : ok(COMPLETED),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map((request) => request.method)).toEqual(['POST', 'GET']);
    expect(result.stdout).toMatch(/\nnothing was deleted; to delete: lethe delete acme\/logs\n$/);
  });

  it('with --json prints only the final plan, and no progress', async () => {
    // Act
    const result = await lethe(['delete', 'acme/logs', '--dry-run', '--json'], (request) =>
      request.method === 'POST' ? ok(aPlan(), 202) : ok(COMPLETED),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${JSON.stringify(COMPLETED)}\n`);
  });

  it('piped, prints a line at every change of state and otherwise every five seconds', async () => {
    // Arrange: a read a second, six of them RUNNING.
    const running = [1, 2, 3, 4, 5, 6].map((second) =>
      aPlan({ state: 'RUNNING', objects: second * 100 }),
    );
    const { deps, stderr } = cliDependencies({ fetch: planning([...running, COMPLETED]).fetch });

    // Act
    await run(['delete', 'acme/logs', '--dry-run', ...LOCAL], deps);

    // Assess
    expect(stderr.text()).toBe(
      [
        'lethe: PENDING, 0 objects counted (0 B), elapsed 0s',
        'lethe: RUNNING, 100 objects counted (0 B), elapsed 1s',
        'lethe: RUNNING, 600 objects counted (0 B), elapsed 6s',
        `lethe: COMPLETED, 8,000 objects counted (170.8 KiB), elapsed 7s, plan ${PLAN_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('on a terminal, redraws one line and clears it before the summary', async () => {
    // Arrange
    const stderr = memoryOutput({ isTTY: true, columns: 200 });
    const api = planning([aPlan({ state: 'RUNNING', objects: 40 }), COMPLETED]);
    const { deps } = cliDependencies({ fetch: api.fetch, stderr });

    // Act
    await run(['delete', 'acme/logs', '--dry-run', ...LOCAL], deps);

    // Assess
    expect(stderr.chunks).toEqual([
      '\r[███                 ]  PENDING  0 objects counted (0 B)  elapsed 0s\x1b[K',
      '\r[ ███                ]  RUNNING  40 objects counted (0 B)  elapsed 1s\x1b[K',
      `\r[  ███               ]  COMPLETED  8,000 objects counted (170.8 KiB)  elapsed 2s  plan ${PLAN_ID}\x1b[K`,
      '\r\x1b[K',
    ]);
  });

  it('stops waiting on Ctrl-C, exits 130 and says the plan goes on', async () => {
    // Arrange
    const key = ctrlC();
    let sleeps = 0;
    const { deps, stdout, stderr } = cliDependencies({
      fetch: planning([aPlan({ state: 'RUNNING', objects: 5 })]).fetch,
      interrupts: key.interrupts,
      sleep: async () => {
        if (++sleeps === 2) key.press();
      },
    });

    // Act
    const code = await run(['delete', 'acme/logs', '--dry-run', ...LOCAL], deps);

    // Assess
    expect(code).toBe(130);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toMatch(
      new RegExp(`\\nlethe: the plan goes on: follow it with lethe plans get acme ${PLAN_ID}\\n$`),
    );
    expect(key.listeners.size).toBe(0);
  });

  it('exits 1 for a plan that ends FAILED, with its failure', async () => {
    // Arrange
    const failed = aPlan({
      state: 'FAILED',
      objects: 14,
      versions: 14,
      bytes: 300,
      failure: { code: 'PlanStalled', message: 'no page was counted for 15 minutes' },
    });

    // Act
    const result = await lethe(['delete', 'acme/logs', '--dry-run'], (request) =>
      request.method === 'POST' ? ok(aPlan(), 202) : ok(failed),
    );

    // Assess
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      [
        `FAILED plan of acme/logs generation 1 (plan ${PLAN_ID}): counted before it failed`,
        'location             s3://lethe-data/streams/acme/logs/1/',
        'failure              PlanStalled: no page was counted for 15 minutes',
        'objects              14',
        'versions             14',
        'delete markers       0',
        'bytes                300 B',
        'uploads in progress  0',
        'nothing was deleted; to plan again: lethe delete acme/logs --dry-run',
        '',
      ].join('\n'),
    );
  });

  it('exits 4 for a stream being deleted, naming its deletion', async () => {
    // Arrange
    const id = '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c';
    const refusal = apiError(
      409,
      'StreamDeleting',
      `stream acme/logs is being deleted (deletion ${id})`,
    );

    // Act
    const result = await lethe(['delete', 'acme/logs', '--dry-run'], () => refusal);

    // Assess
    expect(result.code).toBe(4);
    expect(result.sent.map((request) => request.method)).toEqual(['POST']);
    expect(result.stderr).toBe(
      [
        `lethe: StreamDeleting: stream acme/logs is being deleted (deletion ${id}) (HTTP 409)`,
        `follow it: lethe deletions get acme ${id}`,
        '',
      ].join('\n'),
    );
  });

  it('exits 3 when the plan is gone while it waits', async () => {
    // Act
    const result = await lethe(['delete', 'acme/logs', '--dry-run'], (request) =>
      request.method === 'POST'
        ? ok(aPlan(), 202)
        : apiError(404, 'PlanNotFound', `plan ${PLAN_ID} does not exist for tenant acme`),
    );

    // Assess
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      [
        'lethe: PENDING, 0 objects counted (0 B), elapsed 0s',
        `lethe: PlanNotFound: plan ${PLAN_ID} does not exist for tenant acme (HTTP 404)`,
        '',
      ].join('\n'),
    );
  });
});

describe('lethe plans get', () => {
  it('prints the same summary as a dry run for a COMPLETED plan', async () => {
    // Act
    const result = await lethe(['plans', 'get', 'acme', PLAN_ID], () => ok(COMPLETED));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`GET ${PLANS}/${PLAN_ID}`]);
    expect(result.stdout).toBe(COMPLETED_SUMMARY);
  });

  it('says a RUNNING plan is still running and prints its counts so far, exit 0', async () => {
    // Act
    const result = await lethe(['plans', 'get', 'acme', PLAN_ID], () =>
      ok(aPlan({ state: 'RUNNING', objects: 350, versions: 350, bytes: 2_048 })),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `RUNNING plan of acme/logs generation 1 (plan ${PLAN_ID}): counted so far`,
        'location             s3://lethe-data/streams/acme/logs/1/',
        'objects              350',
        'versions             350',
        'delete markers       0',
        'bytes                2.0 KiB (2,048 bytes)',
        'uploads in progress  0',
        `the plan is still RUNNING; the estimate comes once it is COMPLETED: lethe plans get acme ${PLAN_ID}`,
        'nothing was deleted; to delete: lethe delete acme/logs',
        '',
      ].join('\n'),
    );
  });

  it('exits 1 for a FAILED plan, and prints the raw plan with --json', async () => {
    // Arrange
    const failed = aPlan({ state: 'FAILED', failure: { code: 'PlanStalled', message: 'stalled' } });

    // Act
    const result = await lethe(['plans', 'get', 'acme', PLAN_ID, '--json'], () => ok(failed));

    // Assess
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual(failed);
  });
});

describe('waiting for a plan', () => {
  /** A client whose reads answer or fail in turn. */
  function reads(...answers: Array<PlanView | Error>) {
    const calls: string[] = [];
    const getPlan: LetheClient['getPlan'] = async (tenant, planId) => {
      calls.push(`${tenant} ${planId}`);
      const next = answers.shift();
      if (!next) throw new Error('no more answers');
      if (next instanceof Error) throw next;
      return { status: 200, headers: new Headers(), body: next };
    };
    return { client: { getPlan }, calls };
  }

  it('rides out a few failed reads (a restarting API, a 503)', async () => {
    // Arrange
    const { client, calls } = reads(
      new UnreachableError('cannot reach http://127.0.0.1:3000: ECONNRESET'),
      new ApiError(503, 'HTTP503', 'Service Unavailable', ''),
      COMPLETED,
    );

    // Act
    const plan = await waitForPlan({
      client,
      plan: aPlan(),
      intervalMs: 10,
      sleep: async () => {},
    });

    // Assess
    expect(plan.state).toBe('COMPLETED');
    expect(calls).toEqual([`acme ${PLAN_ID}`, `acme ${PLAN_ID}`, `acme ${PLAN_ID}`]);
  });

  it('gives up after too many failed reads in a row', async () => {
    // Arrange
    const down = () => new ApiError(502, 'HTTP502', 'Bad Gateway', '');
    const { client } = reads(down(), down(), down());

    // Act
    const waiting = waitForPlan({
      client,
      plan: aPlan(),
      intervalMs: 10,
      sleep: async () => {},
      maxFailedReads: 2,
    });

    // Assess
    await expect(waiting).rejects.toThrow('Bad Gateway');
  });

  it('returns at once for a plan that has already ended', async () => {
    // Arrange
    const { client, calls } = reads();

    // Act
    const plan = await waitForPlan({
      client,
      plan: COMPLETED,
      intervalMs: 10,
      sleep: async () => {},
    });

    // Assess
    expect(plan).toBe(COMPLETED);
    expect(calls).toEqual([]);
  });

  it('cuts the line to the width of a narrow terminal', () => {
    // Arrange
    const output = memoryOutput({ isTTY: true, columns: 30 });
    const reporter = new PlanReporter({ output, now: () => 0 });

    // Act
    reporter.update(aPlan({ state: 'RUNNING', objects: 123_456 }));

    // Assess
    expect(output.chunks).toEqual(['\r[███                 ]  RUNNI\x1b[K']);
  });
});

describe('a plan summary', () => {
  it.each<[number, string]>([
    [0, '0 B'],
    [1_023, '1023 B'],
    [1_024, '1.0 KiB (1,024 bytes)'],
    [5 * 1024 ** 3 + 7, '5.0 GiB (5,368,709,127 bytes)'],
  ])('gives %i bytes as %s', (bytes, text) => {
    expect(bytesExactly(bytes)).toBe(text);
  });

  it.each<[number, string]>([
    [0, '0.00 USD'],
    [0.000015, '0.000015 USD'],
    [12.5, '12.50 USD'],
    [1_234.567891, '1,234.567891 USD'],
  ])('gives a cost of %f as %s', (amount, text) => {
    expect(formatUsd(amount)).toBe(text);
  });

  it('says nothing is counted yet for a PENDING plan', () => {
    // Act
    const summary = planSummary(aPlan());

    // Assess
    expect(summary.split('\n')[0]).toBe(
      `PENDING plan of acme/logs generation 1 (plan ${PLAN_ID}): nothing counted yet`,
    );
    expect(summary).not.toContain('the deletion would take');
  });
});
