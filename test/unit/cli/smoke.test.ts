import { describe, expect, it } from 'vitest';
import { ApiError, type ApiResponse, UnreachableError } from '../../../lib/cli/client.ts';
import { run } from '../../../lib/cli/main.ts';
import { smoke, smokeNames } from '../../../lib/cli/smoke.ts';
import type { SmokeClient } from '../../../lib/cli/smoke-steps.ts';
import {
  certificateOf,
  type DeletionReceipt,
  type PlanView,
  type StreamView,
} from '../../../lib/core/index.ts';
import { cliDependencies, ctrlC, fakeFetch, LOCAL, memoryOutput } from '../../helpers/cli.ts';
import { localSigner } from '../../helpers/signer.ts';

const NAMES = { tenant: 'smoke-20260301-120000-abcdef', stream: 'events-abcdef' };
const REF = `${NAMES.tenant}/${NAMES.stream}`;
const ENDPOINT = 'http://127.0.0.1:3000';
const LOCATION = `s3://lethe-data/streams/${REF}/1/`;
const STEPS = [
  'health',
  'create stream',
  'ingest',
  'plan',
  'schedule deletion',
  'cancel',
  'delete',
  'wait',
  'certificate',
  'clean up',
];
const CLEANUP = `lethe tenants delete ${NAMES.tenant} --grace 0 --wait --endpoint ${ENDPOINT}`;

const ok = <T>(body: T, status = 200): ApiResponse<T> => ({ status, headers: new Headers(), body });
const notFound = (code: string) =>
  new ApiError(404, code, `${code}: ${NAMES.tenant}`, JSON.stringify({ error: { code } }));

/**
 * An API that does what Lethe's does, in memory, for one stream: `overrides` replace methods
 * (given the API's own) to make one step go wrong. `calls` records each call with its arguments.
 */
function fakeApi(
  overrides: (
    base: SmokeClient,
    signer: ReturnType<typeof localSigner>,
  ) => Partial<SmokeClient> = () => ({}),
) {
  const signer = localSigner();
  const calls: string[] = [];
  const objects: number[] = [];
  const receipts = new Map<string, DeletionReceipt>();
  let ids = 0;
  const stream = (state: StreamView['state'] = 'ACTIVE'): StreamView => ({
    ...NAMES,
    state,
    generation: 1,
    location: LOCATION,
    createdAt: '2026-03-01T12:00:00.000Z',
  });
  const receipt = (overrides: Partial<DeletionReceipt>): DeletionReceipt => ({
    deletionId: `0000000${++ids}-0000-4000-8000-000000000000`,
    ...NAMES,
    generation: 1,
    location: LOCATION,
    state: 'PENDING',
    objectsDeleted: 0,
    bytesDeleted: 0,
    multipartUploadsAborted: 0,
    requestedAt: '2026-03-01T12:00:00.000Z',
    executeAfter: '2026-03-01T12:00:00.000Z',
    attempts: 1,
    ...overrides,
  });
  const plan = (state: PlanView['state']): PlanView => ({
    planId: '9a8b7c6d-1e2f-4a3b-8c9d-0e1f2a3b4c5d',
    ...NAMES,
    generation: 1,
    location: LOCATION,
    state,
    objects: state === 'COMPLETED' ? objects.length : 0,
    versions: state === 'COMPLETED' ? objects.length : 0,
    bytes: state === 'COMPLETED' ? objects.reduce((sum, size) => sum + size, 0) : 0,
    deleteMarkers: 0,
    multipartUploads: 0,
    estimate: {
      s3Requests: 1,
      sqsMessages: 1,
      dynamodbWrites: 1,
      lambdaGbSeconds: 0,
      costUsd: 0,
      seconds: 1,
    },
    requestedAt: '2026-03-01T12:00:00.000Z',
  });
  const kept = (body: DeletionReceipt) => {
    receipts.set(body.deletionId, body);
    return body;
  };
  const client: SmokeClient = {
    endpoint: ENDPOINT,
    health: async () => ok({ status: 'ok' }),
    createStream: async () => ok(stream(), 201),
    getStream: async () => ok(stream()),
    listStreams: async () => ok({ streams: [] }),
    ingest: async (_tenant, _stream, events) => {
      objects.push(events.byteLength);
      const count = (JSON.parse(new TextDecoder().decode(events)) as unknown[]).length;
      return ok({ key: `streams/${REF}/1/dt=2026-03-01/${objects.length}.json`, count }, 201);
    },
    createPlan: async () => ok(plan('PENDING'), 202),
    getPlan: async () => ok(plan('COMPLETED')),
    deleteStream: async (_tenant, _stream, grace) =>
      ok(
        kept(
          grace
            ? receipt({ state: 'SCHEDULED', executeAfter: '2026-03-01T12:05:00.000Z' })
            : receipt({ state: 'PENDING' }),
        ),
        202,
      ),
    cancelDeletion: async (_tenant, id) =>
      ok(kept({ ...(receipts.get(id) as DeletionReceipt), state: 'CANCELLED' })),
    getDeletion: async (_tenant, id) =>
      ok(
        kept({
          ...(receipts.get(id) as DeletionReceipt),
          state: 'COMPLETED',
          objectsDeleted: objects.length,
          bytesDeleted: objects.reduce((sum, size) => sum + size, 0),
          completedAt: '2026-03-01T12:00:05.000Z',
          verifiedAt: '2026-03-01T12:00:05.000Z',
        }),
      ),
    getCertificate: async (_tenant, id) =>
      ok(await signer.sign(certificateOf(receipts.get(id) as DeletionReceipt))),
    getCertificateKey: async () => ok(signer.key),
    deleteTenant: async () => {
      throw notFound('TenantNotFound');
    },
    getOffboarding: async () => {
      throw notFound('OffboardingNotFound');
    },
  };
  const recorded = Object.fromEntries(
    Object.entries({ ...client, ...overrides(client, signer) }).map(([name, value]) => [
      name,
      typeof value === 'function'
        ? (...args: unknown[]) => {
            calls.push(`${name} ${args.filter((arg) => !(arg instanceof Uint8Array)).join(' ')}`);
            return (value as (...args: unknown[]) => unknown)(...args);
          }
        : value,
    ]),
  ) as unknown as SmokeClient;
  return { client: recorded, calls, signer };
}

/** Runs the smoke test against `client`, with a fake clock and memory outputs. */
async function runSmoke(
  client: SmokeClient,
  options: {
    json?: boolean;
    interrupts?: ReturnType<typeof ctrlC>['interrupts'];
    /** stderr is a terminal. */
    tty?: boolean;
  } = {},
) {
  const stdout = memoryOutput();
  const stderr = memoryOutput({ isTTY: options.tty ?? false });
  let clock = 0;
  const code = await smoke(
    {
      client,
      json: options.json ?? false,
      intervalMs: 1_000,
      stdout,
      stderr,
      now: () => clock,
      wallNow: () => Date.parse('2026-03-01T12:00:00.000Z') + clock,
      sleep: async (ms) => {
        clock += ms;
      },
      interrupts: options.interrupts,
    },
    NAMES,
  );
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The step names of the lines printed, with their verdict. */
const verdicts = (stdout: string) =>
  [...stdout.matchAll(/^(ok {2}|FAIL) {2}(\S+(?: \S+)?) +\d+\.\ds {2}/gm)].map(
    ([, verdict, step]) => `${verdict?.trim()} ${step}`,
  );

describe('lethe smoke', () => {
  it('passes every step against an API that does what it should, and cleans up', async () => {
    // Prepare
    const api = fakeApi();

    // Act
    const result = await runSmoke(api.client);

    // Assess
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(verdicts(result.stdout)).toEqual(STEPS.map((step) => `ok ${step}`));
    expect(result.stdout).toContain(`smoke test of ${ENDPOINT}, tenant ${NAMES.tenant}`);
    expect(result.stdout).toContain('3 objects (6 events) stored under');
    expect(result.stdout).toMatch(
      /plan +\d+\.\ds {2}COMPLETED: 3 objects, 3 versions, .*, as stored/,
    );
    expect(result.stdout).toContain('CANCELLED, nothing deleted');
    expect(result.stdout).toContain('COMPLETED: 3 objects, ');
    expect(result.stdout).toContain(
      `valid: 3 objects of ${REF}, signed by ${api.signer.key.keyId}`,
    );
    expect(result.stdout).toContain(`tenant ${NAMES.tenant} has no stream left`);
    expect(result.stdout).toMatch(/^smoke test passed: 10 steps in \d+\.\ds$/m);
    // The deletion it cancels has a grace window; the one it waits for none, whatever the
    // stack's default; the tenant is offboarded at once.
    expect(api.calls.filter((call) => /^(deleteStream|deleteTenant)/.test(call))).toEqual([
      `deleteStream ${NAMES.tenant} ${NAMES.stream} 300`,
      `deleteStream ${NAMES.tenant} ${NAMES.stream} 0`,
      `deleteTenant ${NAMES.tenant} 0`,
    ]);
  });

  it('fails at the plan when it counts other than what was stored, leaving the stream', async () => {
    // Prepare
    const { client } = fakeApi((base) => ({
      getPlan: async (...args) => {
        const { body } = await base.getPlan(...args);
        return ok({ ...body, objects: body.objects - 1, versions: body.versions - 1 });
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(11);
    expect(verdicts(result.stdout)).toEqual([
      ...STEPS.slice(0, 3).map((s) => `ok ${s}`),
      'FAIL plan',
    ]);
    expect(result.stderr).toContain(
      'lethe: smoke test failed at step plan: plan 9a8b7c6d-1e2f-4a3b-8c9d-0e1f2a3b4c5d counted 2 objects, 2 versions',
    );
    expect(result.stderr).toContain('3 objects were stored');
    expect(result.stderr).toContain(
      `left behind:\n  stream ${REF} at ${LOCATION}, with 3 objects stored\n`,
    );
    expect(result.stderr).toContain(`clean it up: ${CLEANUP}\n`);
  });

  it('fails at the cancel when the cancelled deletion deleted something', async () => {
    // Prepare
    const { client } = fakeApi((base) => ({
      cancelDeletion: async (...args) => {
        const { body } = await base.cancelDeletion(...args);
        return ok({ ...body, objectsDeleted: 1 });
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(11);
    expect(verdicts(result.stdout).at(-1)).toBe('FAIL cancel');
    expect(result.stderr).toMatch(
      /failed at step cancel: cancelled deletion \S+ deleted 1 object\n/,
    );
    expect(result.stderr).toContain(`clean it up: ${CLEANUP}`);
  });

  it('fails at the wait when the receipt counts other than the plan, with no data left', async () => {
    // Prepare
    const { client } = fakeApi((base) => ({
      getDeletion: async (...args) => {
        const { body } = await base.getDeletion(...args);
        return ok({ ...body, bytesDeleted: body.bytesDeleted + 1 });
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(11);
    expect(verdicts(result.stdout).at(-1)).toBe('FAIL wait');
    expect(result.stderr).toMatch(
      /failed at step wait: deletion \S+ deleted 3 objects, .* the plan counted 3 versions/,
    );
    expect(result.stderr).toContain('left behind: no stream data\n');
    expect(result.stderr).not.toContain('clean it up');
  });

  it('fails at the wait when the deletion has not ended after ten minutes', async () => {
    // Prepare
    let reads = 0;
    const { client, calls } = fakeApi((base) => ({
      // It ends in the end, well after ten minutes: a run without a limit ends too.
      getDeletion: async (...args) => {
        const { body } = await base.getDeletion(...args);
        if (++reads > 900) return ok(body);
        return ok({ ...body, state: 'RUNNING' as const, objectsDeleted: 0, bytesDeleted: 0 });
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess: read every second (the fake clock's) for ten minutes, then given up.
    expect(result.code).toBe(11);
    expect(calls.filter((call) => call.startsWith('getDeletion'))).toHaveLength(600);
    expect(result.stderr).toMatch(
      /failed at step wait: deletion \S+ has not ended after 10m00s\nleft behind:\n {2}stream .*\n {2}its deletion \S+, RUNNING\n/,
    );
    expect(result.stderr).toContain(`clean it up: ${CLEANUP}`);
  });

  it('waits for the offboarding of a tenant that still has a stream, then checks none is left', async () => {
    // Prepare
    const offboarding = {
      tenant: NAMES.tenant,
      offboardingId: '5b2e8c1a-3d4f-4e6a-9b7c-8d9e0f1a2b3c',
      state: 'RUNNING' as const,
      deletions: [],
      streams: 1,
      deletionStates: {},
      objectsDeleted: 0,
      bytesDeleted: 0,
      requestedAt: '2026-03-01T12:00:00.000Z',
      executeAfter: '2026-03-01T12:00:00.000Z',
    };
    const { client } = fakeApi(() => ({
      deleteTenant: async () => ok(offboarding, 202),
      getOffboarding: async () => ok({ ...offboarding, state: 'COMPLETED' as const }),
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `offboarded tenant ${NAMES.tenant}: 1 stream deleted; tenant ${NAMES.tenant} has no stream left\n`,
    );
  });

  it('exits 5 when the deletion ends FAILED, saying how to retry it and clean up', async () => {
    // Prepare
    const failures = [{ code: 'AccessDenied', message: 'not allowed', key: 'k' }];
    const { client } = fakeApi((base) => ({
      getDeletion: async (...args) => {
        const { body } = await base.getDeletion(...args);
        return ok({ ...body, state: 'FAILED' as const, failures });
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /failed at step wait: deletion \S+ ended FAILED: AccessDenied: not allowed\n/,
    );
    expect(result.stderr).toMatch(/FAILED: retry it with lethe deletions retry smoke-\S+ \S+\n/);
    expect(result.stderr).toContain(`clean it up: ${CLEANUP}`);
  });

  it('exits 10 when the certificate does not verify against the published key', async () => {
    // Prepare
    const other = localSigner();
    const { client } = fakeApi(() => ({
      getCertificateKey: async () => ok(other.key),
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(10);
    expect(verdicts(result.stdout).at(-1)).toBe('FAIL certificate');
    expect(result.stderr).toMatch(
      /failed at step certificate: the certificate of deletion \S+ does not verify against the key the API publishes for arn:aws:kms:/,
    );
    expect(result.stderr).toContain('left behind: no stream data');
  });

  it('exits 10 when the certificate certifies other counts than the receipt', async () => {
    // Prepare
    const { client } = fakeApi((base, signer) => ({
      getCertificate: async (...args) => {
        const { certificate } = (await base.getCertificate(...args)).body;
        return ok(await signer.sign({ ...certificate, objectsDeleted: 99 }));
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(10);
    expect(result.stderr).toContain(
      "failed at step certificate: the certificate's objectsDeleted differ from the receipt's",
    );
  });

  it('fails at the clean up when a stream is left under the tenant', async () => {
    // Prepare
    const { client } = fakeApi(() => ({
      listStreams: async () =>
        ok({
          streams: [
            {
              ...NAMES,
              stream: 'other',
              state: 'ACTIVE' as const,
              generation: 1,
              location: LOCATION,
              createdAt: '',
            },
          ],
        }),
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(11);
    expect(result.stderr).toContain(
      `failed at step clean up: tenant ${NAMES.tenant} still has 1 stream: other (ACTIVE)`,
    );
  });

  it('ends an API refusal with its exit code and words, leaving nothing when nothing was made', async () => {
    // Prepare
    const { client } = fakeApi(() => ({
      createStream: async () => {
        throw new ApiError(403, 'AccessDenied', 'User is not authorized', '{}');
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(7);
    expect(result.stdout).toMatch(
      /^FAIL {2}create stream +\d+\.\ds {2}AccessDenied: User is not authorized \(HTTP 403\)$/m,
    );
    expect(result.stderr).toContain('failed at step create stream: AccessDenied');
    expect(result.stderr).toContain('left behind: no stream data\n');
  });

  it('exits 6 when the endpoint does not answer', async () => {
    // Prepare
    const { client } = fakeApi(() => ({
      health: async () => {
        throw new UnreachableError(`cannot reach ${ENDPOINT}: ECONNREFUSED`);
      },
    }));

    // Act
    const result = await runSmoke(client);

    // Assess
    expect(result.code).toBe(6);
    expect(result.stderr).toBe(
      `lethe: smoke test failed at step health: cannot reach ${ENDPOINT}: ECONNREFUSED\nleft behind: no stream data\n`,
    );
  });

  it('stops at Ctrl-C while waiting, saying what it leaves and how to clean it', async () => {
    // Prepare
    const ctrl = ctrlC();
    const { client } = fakeApi((base) => ({
      getDeletion: async (...args) => {
        const { body } = await base.getDeletion(...args);
        ctrl.press();
        return ok({ ...body, state: 'RUNNING' as const });
      },
    }));

    // Act
    const result = await runSmoke(client, { interrupts: ctrl.interrupts });

    // Assess
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(
      /failed at step wait: interrupted\nleft behind:\n {2}stream .*\n {2}its deletion \S+, (PENDING|RUNNING)\n/,
    );
    expect(result.stderr).toContain(`clean it up: ${CLEANUP}`);
    expect(ctrl.listeners.size).toBe(0);
  });

  it('shows on a terminal what a wait waits for, and clears it when the step ends', async () => {
    // Prepare
    const { client } = fakeApi();

    // Act
    const result = await runSmoke(client, { tty: true });

    // Assess: a status line per wait, each cleared; nothing else on stderr.
    expect(result.code).toBe(0);
    const shown = result.stderr.split('\r\x1b[K').filter(Boolean);
    expect(shown).toEqual([
      '\rwaiting for plan 9a8b7c6d-1e2f-4a3b-8c9d-0e1f2a3b4c5d: 0s\x1b[K',
      // The second deletion of the fake API: the one not cancelled.
      '\rwaiting for deletion 00000002-0000-4000-8000-000000000000: 0s\x1b[K',
    ]);
    expect(verdicts(result.stdout)).toEqual(STEPS.map((step) => `ok ${step}`));
  });

  it('prints one JSON object with --json: the steps, and on failure what is left', async () => {
    // Prepare
    const passing = fakeApi();
    const failing = fakeApi(() => ({ getCertificateKey: async () => ok(localSigner().key) }));

    // Act
    const passed = await runSmoke(passing.client, { json: true });
    const failed = await runSmoke(failing.client, { json: true });

    // Assess
    expect(passed.code).toBe(0);
    const body = JSON.parse(passed.stdout);
    expect(body).toMatchObject({ passed: true, endpoint: ENDPOINT, ...NAMES });
    expect(
      body.steps.map((step: { step: string; passed: boolean }) => [step.step, step.passed]),
    ).toEqual(STEPS.map((step) => [step, true]));
    expect(failed.code).toBe(10);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      passed: false,
      failedStep: 'certificate',
      leftBehind: [],
    });
    expect(failed.stderr).toContain('failed at step certificate');
  });
});

describe('lethe smoke, from the command line', () => {
  it('runs its steps against the endpoint and names the step that failed', async () => {
    // Prepare
    const api = fakeFetch(() => ({
      status: 503,
      body: { error: { code: 'Unavailable', message: 'try later' } },
    }));
    const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(['smoke', ...LOCAL], deps);

    // Assess
    expect(code).toBe(1);
    expect(api.sent.map((request) => `${request.method} ${request.url}`)).toEqual([
      `GET ${ENDPOINT}/v1/health`,
    ]);
    expect(stdout.text()).toMatch(
      /^smoke test of http:\/\/127\.0\.0\.1:3000, tenant smoke-\d{8}-\d{6}-[0-9a-f]{6}, stream events-[0-9a-f]{6}\nFAIL {2}health /,
    );
    expect(stderr.text()).toContain(
      'lethe: smoke test failed at step health: Unavailable: try later (HTTP 503)',
    );
  });

  it("runs against the deployed stack's ApiUrl, signed with the caller's credentials", async () => {
    // Prepare
    const url = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/';
    const api = fakeFetch(() => ({ status: 200, body: { status: 'ok' } }));
    const stacks: string[] = [];
    const { deps, stdout } = cliDependencies({
      fetch: api.fetch,
      lookupStack: () => async (stack) => {
        stacks.push(stack);
        return { url };
      },
      credentials: () => async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    });

    // Act
    await run(['smoke', '--stack', 'Lethe-prod'], deps);

    // Assess: its first request, the health check, went to the stack's API, signed.
    expect(stacks).toEqual(['Lethe-prod']);
    expect(api.sent[0]?.url).toBe(`${url}v1/health`);
    expect(api.sent[0]?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, /,
    );
    expect(stdout.text()).toMatch(/^smoke test of https:\/\/abc123\.execute-api\./);
  });

  it('takes no arguments', async () => {
    // Prepare
    const { deps, stderr } = cliDependencies();

    // Act
    const code = await run(['smoke', 'acme', ...LOCAL], deps);

    // Assess
    expect(code).toBe(2);
    expect(stderr.text()).toContain('usage: lethe smoke');
  });

  it('names a run by a tenant and stream of its own, dated', () => {
    // Act
    const names = smokeNames(Date.parse('2026-12-07T18:46:33.512Z'), '1a2b3c');

    // Assess
    expect(names).toEqual({ tenant: 'smoke-20261207-184633-1a2b3c', stream: 'events-1a2b3c' });
  });
});
