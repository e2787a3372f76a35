import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudFormationClient,
  CreateStackCommand,
  DeleteStackCommand,
} from '@aws-sdk/client-cloudformation';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesExactly } from '../../lib/cli/plan-format.ts';
import { formatBytes, formatCount } from '../../lib/cli/progress.ts';
import { dayOf } from '../../lib/core/index.ts';
import { freePort } from '../../lib/local/emulator.ts';
import { parseLocation } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  input?: string;
  env?: Record<string, string | undefined>;
  /** Called with stderr as it grows (progress lines), and the running process. */
  onStderr?: (stderr: string, child: ChildProcess) => void;
  /** Run through `npx lethe` (the package's bin) instead of node directly. */
  npx?: boolean;
}

/**
 * The `lethe` CLI end to end: the real program as a child process against a local stack, as an
 * operator would run it. Deleting is held back by a gate on DeleteObjects until the test opens
 * it, so a deletion is reliably in progress when the 409 cases run.
 */
describe('the lethe CLI against a local stack', () => {
  let target: TestTarget;
  let openGate: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  let workdir: string;
  const stream = `cli-${randomUUID().slice(0, 8)}`;
  const ref = `acme/${stream}`;
  const deleted = { objects: 0, bytes: 0 };
  let deletionId = '';

  const lethe = (args: string[], options: CliOptions = {}) =>
    new Promise<CliRun>((resolve, reject) => {
      const [command, prefix] = options.npx
        ? ['npx', ['--no-install', 'lethe']]
        : [process.execPath, ['bin/lethe.mjs']];
      const child = spawn(command, [...prefix, ...args], {
        cwd: ROOT,
        env: {
          ...process.env,
          // Never ask an instance metadata service: there is none here.
          AWS_EC2_METADATA_DISABLED: 'true',
          LETHE_ENDPOINT: target.baseUrl,
          ...options.env,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        options.onStderr?.(stderr, child);
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(options.input ?? '');
    });

  beforeAll(async () => {
    target = await startTarget({
      settings: { LETHE_PAGE_SIZE: '50' },
      wrapClients: (clients) => {
        clients.s3Deletes.middlewareStack.add(
          (next, context) => async (args) => {
            if (context.commandName === 'DeleteObjectsCommand') await gate;
            return next(args);
          },
          { step: 'initialize', name: 'cliTestDeleteGate' },
        );
        return clients;
      },
    });
    workdir = await mkdtemp(join(tmpdir(), 'lethe-cli-'));
  });

  afterAll(async () => {
    openGate();
    await target?.stop();
    if (workdir) await rm(workdir, { recursive: true, force: true });
  });

  it('runs as the package bin through npx', async () => {
    // Act
    const result = await lethe(['--help'], { npx: true });

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  lethe delete TENANT/STREAM [--grace DURATION] [--wait]');
    expect(result.stdout).toContain('  lethe deletions cancel TENANT DELETION_ID');
    expect(result.stdout).toContain('  4  conflict (409)');
  });

  it('creates a stream', async () => {
    // Act
    const result = await lethe(['streams', 'create', ref]);

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(`^created ${ref} generation 1 at s3://[a-z0-9.-]+/streams/${ref}/1/\\n$`),
    );
  });

  it('ingests a JSON array from a file and from stdin', async () => {
    // Prepare
    const file = join(workdir, 'events.json');
    const fromFile = JSON.stringify([{ level: 'info' }, { level: 'warn' }, { level: 'error' }]);
    const fromStdin = JSON.stringify([{ piped: true }]);
    await writeFile(file, fromFile);

    // Act
    const first = await lethe(['ingest', ref, file]);
    const second = await lethe(['ingest', ref, '-'], { input: fromStdin });

    // Assess
    const stored = (count: number) =>
      new RegExp(
        `^stored ${count} ${count === 1 ? 'event' : 'events'} in streams/${ref}/1/dt=\\d{4}-\\d{2}-\\d{2}/\\S+\\.json\\n$`,
      );
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(stored(3));
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(stored(1));
    deleted.objects += 2;
    deleted.bytes += Buffer.byteLength(fromFile) + Buffer.byteLength(fromStdin);
  });

  it('lists the tenant streams', async () => {
    // Act
    const result = await lethe(['streams', 'list', 'acme']);

    // Assess
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^STREAM +STATE +GENERATION +CREATED +LOCATION$/);
    expect(lines.filter((line) => line.startsWith(`${stream} `))).toEqual([
      expect.stringMatching(
        new RegExp(`^${stream} +ACTIVE +1 +\\S+ +s3://\\S+/streams/${ref}/1/$`),
      ),
    ]);
  });

  it('prints the raw JSON of a stream with --json', async () => {
    // Act
    const result = await lethe(['streams', 'get', ref, '--json']);

    // Assess
    expect(result.code).toBe(0);
    const view = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(view).toEqual({
      tenant: 'acme',
      stream,
      state: 'ACTIVE',
      generation: 1,
      location: expect.stringMatching(new RegExp(`^s3://[a-z0-9.-]+/streams/${ref}/1/$`)),
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const where = parseLocation(String(view.location));
    const objects = partitionedObjects(where.prefix, 400, 4);
    deleted.bytes += await seedObjects(target.s3, where.bucket, objects);
    deleted.objects += objects.length;
    expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(deleted.objects);
  });

  it('exits 3 with the API error for a stream that does not exist', async () => {
    // Act
    const result = await lethe(['streams', 'get', 'acme/no-such-stream']);

    // Assess
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'lethe: StreamNotFound: stream acme/no-such-stream does not exist (HTTP 404)\n',
    );
  });

  it('requests the deletion and says how to follow it', async () => {
    // Act
    const result = await lethe(['delete', ref]);

    // Assess
    expect(result.code).toBe(0);
    const match = new RegExp(
      `^PENDING ${ref} generation 1: 0 objects \\(0 B\\) deleted so far \\(deletion ([0-9a-f-]{36}), attempts 1\\)\\n` +
        'follow it: lethe deletions get acme ([0-9a-f-]{36})\\n$',
    ).exec(result.stdout);
    expect(match?.[1]).toBeDefined();
    expect(match?.[2]).toBe(match?.[1]);
    deletionId = match?.[1] ?? '';
  });

  it('exits 4 when creating or ingesting while the deletion runs, naming the deletion', async () => {
    // Act
    const create = await lethe(['streams', 'create', ref]);
    const ingest = await lethe(['ingest', ref, '-', '--json'], { input: '[{"late":true}]' });

    // Assess
    const [refusal, hint, rest] = create.stderr.split('\n');
    expect(create.code).toBe(4);
    expect(refusal).toMatch(
      new RegExp(`^lethe: StreamDeleting: stream ${ref} is being deleted.* \\(HTTP 409\\)$`),
    );
    expect(refusal).toContain(`(deletion ${deletionId})`);
    expect(hint).toBe(`follow it: lethe deletions get acme ${deletionId}`);
    expect(rest).toBe('');
    expect(ingest.code).toBe(4);
    expect(JSON.parse(ingest.stdout)).toMatchObject({
      error: {
        code: 'StreamDeleting',
        message: expect.stringMatching(new RegExp(`^stream ${ref} is being deleted`)),
      },
    });
  });

  it('delete --wait follows the deletion to COMPLETED and ends with the receipt', async () => {
    // Act: open the gate once the CLI shows its first progress line.
    const result = await lethe(['delete', ref, '--wait', '--interval', '0.25'], {
      onStderr: () => openGate(),
    });

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^COMPLETED ${ref} generation 1: ${deleted.objects} objects \\(${formatBytes(deleted.bytes).replace('.', '\\.')}\\) ` +
          `deleted in [\\d.]+s, location verified empty \\(deletion ${deletionId}, attempts \\d+\\)\\n$`,
      ),
    );
    const progress = result.stderr.trimEnd().split('\n');
    expect(progress[0]).toMatch(/^lethe: (PENDING|RUNNING), \d+ objects deleted, /);
    expect(progress.at(-1)).toMatch(
      new RegExp(
        `^lethe: COMPLETED, ${deleted.objects} objects deleted(, [\\d,]+ objects/s)?, elapsed \\d+s, deletion ${deletionId}$`,
      ),
    );
  });

  it('prints the exact receipt with deletions get --json', async () => {
    // Act
    const result = await lethe(['deletions', 'get', 'acme', deletionId, '--json']);

    // Assess
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      deletionId,
      tenant: 'acme',
      stream,
      generation: 1,
      state: 'COMPLETED',
      objectsDeleted: deleted.objects,
      bytesDeleted: deleted.bytes,
    });
  });

  it('exits 3 for a deletion id the tenant does not have', async () => {
    // Prepare
    const unknown = randomUUID();

    // Act
    const result = await lethe(['deletions', 'get', 'acme', unknown]);

    // Assess
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `lethe: DeletionNotFound: deletion ${unknown} does not exist for tenant acme (HTTP 404)\n`,
    );
  });

  it('exits 6 when nothing listens at the endpoint', async () => {
    // Prepare
    const port = await freePort();

    // Act
    const result = await lethe(['health', '--endpoint', `http://127.0.0.1:${port}`]);

    // Assess
    expect(result.code).toBe(6);
    expect(result.stderr).toBe(
      [
        `lethe: cannot reach http://127.0.0.1:${port}: ECONNREFUSED`,
        'the endpoint came from --endpoint',
        'hint: start the local stack with `npm start`, or check --endpoint',
        '',
      ].join('\n'),
    );
  });

  it('finds the API through the ApiUrl output of a CloudFormation stack', async () => {
    // Prepare: a stack in the emulator whose only purpose is its output.
    const stackName = `LetheCli${randomUUID().slice(0, 8)}`;
    const cloudFormation = new CloudFormationClient({});
    await cloudFormation.send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Handle: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
          Outputs: { ApiUrl: { Value: `${target.baseUrl}/` } },
        }),
      }),
    );

    try {
      // Act: no --endpoint, no LETHE_ENDPOINT; the name is free again, so a new incarnation.
      const result = await lethe(['streams', 'create', ref, '--stack', stackName], {
        env: { LETHE_ENDPOINT: undefined },
      });

      // Assess
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^created ${ref} generation 2 at `));
    } finally {
      await cloudFormation.send(new DeleteStackCommand({ StackName: stackName }));
    }
  });
  describe('a deletion with a grace window', () => {
    const graced = `${stream}-g`;
    const gracedRef = `acme/${graced}`;
    const idOf = (stdout: string) => /\(deletion ([0-9a-f-]{36})[,)]/.exec(stdout)?.[1] ?? '';

    it('is SCHEDULED, says when it starts and how to stop it, and cancels', async () => {
      // Prepare
      expect((await lethe(['streams', 'create', gracedRef])).code).toBe(0);

      // Act
      const scheduled = await lethe(['delete', gracedRef, '--grace', '1h']);
      const id = idOf(scheduled.stdout);
      const listed = await lethe(['deletions', 'list', 'acme', '--state', 'scheduled']);
      const cancelled = await lethe(['deletions', 'cancel', 'acme', id]);
      const view = await lethe(['streams', 'get', gracedRef]);

      // Assess
      expect(scheduled.code).toBe(0);
      expect(scheduled.stdout).toMatch(
        new RegExp(
          `^SCHEDULED ${gracedRef} generation 1: nothing deleted yet; the deletion starts at \\S+Z, in 59m \\d\\ds \\(deletion ${id}\\)\\n` +
            `cancel it: +lethe deletions cancel acme ${id}\\n` +
            `start it now: lethe deletions expedite acme ${id}\\n` +
            `follow it: +lethe deletions get acme ${id}\\n$`,
        ),
      );
      expect(listed.code).toBe(0);
      expect(listed.stdout.split('\n')[0]).toMatch(
        /^DELETION +STREAM +SCOPE +STATE +REQUESTED +OBJECTS DELETED$/,
      );
      expect(listed.stdout).toMatch(
        new RegExp(`^${id} +${graced} +stream +SCHEDULED +\\S+ +0$`, 'm'),
      );
      expect(cancelled.code).toBe(0);
      expect(cancelled.stdout).toMatch(
        new RegExp(
          `^CANCELLED ${gracedRef} generation 1 at \\S+: nothing was deleted \\(deletion ${id}\\)\\n`,
        ),
      );
      expect(cancelled.stdout).toContain(`${gracedRef} is ACTIVE again, its data untouched\n`);
      expect(view.stdout).toMatch(/^state +ACTIVE$/m);
    });

    it('stops waiting on Ctrl-C, exits 130, and the deletion goes on until expedited', async () => {
      // Act: Ctrl-C as soon as the countdown shows.
      let pressed = false;
      const waiting = await lethe(['delete', gracedRef, '--grace', '1h', '--wait'], {
        onStderr: (_, child) => {
          if (!pressed) child.kill('SIGINT');
          pressed = true;
        },
      });
      const id = /lethe deletions get acme ([0-9a-f-]{36})/.exec(waiting.stderr)?.[1] ?? '';
      const still = await lethe(['deletions', 'get', 'acme', id]);
      const expedited = await lethe([
        'deletions',
        'expedite',
        'acme',
        id,
        '--wait',
        '--interval',
        '0.25',
      ]);

      // Assess
      expect(waiting.code).toBe(130);
      expect(waiting.stdout).toBe('');
      expect(waiting.stderr).toMatch(/^lethe: SCHEDULED, starts in 59m \d\ds \(at \S+\)\n/);
      expect(waiting.stderr).toMatch(
        new RegExp(
          `\\nlethe: the deletion goes on: follow it with lethe deletions get acme ${id}\\n` +
            `cancel it with lethe deletions cancel acme ${id}\\n$`,
        ),
      );
      expect(still.stdout).toMatch(/^SCHEDULED /);
      expect(expedited.code).toBe(0);
      expect(expedited.stdout).toMatch(
        new RegExp(`^COMPLETED ${gracedRef} generation 1: 0 objects \\(0 B\\) deleted in `),
      );
    });

    it('counts down with --wait, then follows the deletion to COMPLETED', async () => {
      // Prepare: the name is free again, for a second incarnation.
      expect((await lethe(['streams', 'create', gracedRef])).code).toBe(0);

      // Act
      const result = await lethe([
        'delete',
        gracedRef,
        '--grace',
        '3s',
        '--wait',
        '--interval',
        '0.25',
      ]);

      // Assess
      expect(result.code).toBe(0);
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^lethe: SCHEDULED, starts in [23]s \(at \S+\)$/);
      expect(lines.at(-1)).toMatch(
        /^lethe: COMPLETED, 0 objects deleted, .*deletion [0-9a-f-]{36}$/,
      );
      expect(result.stdout).toMatch(new RegExp(`^COMPLETED ${gracedRef} generation 2: `));
    });
  });

  describe('first use', () => {
    it('hints that an NDJSON file needs to be a JSON array', async () => {
      // Act
      const result = await lethe(['ingest', ref, '-'], { input: '{"a":1}\n{"a":2}\n' });

      // Assess
      expect(result.code).toBe(7);
      const lines = result.stderr.split('\n');
      expect(lines[0]).toMatch(/^lethe: InvalidJson: the body is not valid JSON.* \(HTTP 400\)$/);
      // The API's message says it is NDJSON and what to send; the CLI does not say it again.
      expect(lines[0]).toContain(
        'it looks like NDJSON (one event per line): send a JSON array, [event, event, ...]',
      );
      expect(lines.filter((line) => line.includes('NDJSON'))).toHaveLength(1);
      // Where the API's parser stopped, when its message says: the second line.
      if (/position \d+/.test(lines[0] ?? '')) {
        expect(lines).toContain('the API stopped at position 8 (line 2, column 1)');
      }
    });

    it('suggests the option meant, and exits 2 for a malformed LETHE_ENDPOINT', async () => {
      // Act
      const typo = await lethe(['deletions', 'list', 'acme', '--limt', '5']);
      const malformed = await lethe(['health'], { env: { LETHE_ENDPOINT: 'localhost:3000' } });

      // Assess
      expect(typo.code).toBe(2);
      expect(typo.stderr).toBe(
        "lethe: unknown option --limt (did you mean --limit?)\nRun 'lethe --help' for usage.\n",
      );
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toMatch(/^lethe: LETHE_ENDPOINT must be an http or https URL: /);
    });
  });

  describe('dry runs', () => {
    const planned = `${stream}-p`;
    const plannedRef = `acme/${planned}`;

    it('counts a seeded stream exactly, prints the estimate, and deletes nothing', async () => {
      // Arrange: 120 objects over three partitions, written straight to S3.
      expect((await lethe(['streams', 'create', plannedRef])).code).toBe(0);
      const view = JSON.parse((await lethe(['streams', 'get', plannedRef, '--json'])).stdout);
      const where = parseLocation(String(view.location));
      const bytes = await seedObjects(
        target.s3,
        where.bucket,
        partitionedObjects(where.prefix, 120, 3),
      );
      const before = await listAll(target.s3, where.bucket, where.prefix);

      // Act
      const result = await lethe(['delete', plannedRef, '--dry-run', '--interval', '0.25']);
      const after = await listAll(target.s3, where.bucket, where.prefix);
      const shown = await lethe(['streams', 'get', plannedRef]);

      // Assess
      expect(result.code).toBe(0);
      const planId =
        new RegExp(
          `^COMPLETED plan of ${plannedRef} generation 1 \\(plan ([0-9a-f-]{36})\\)\\n`,
        ).exec(result.stdout)?.[1] ?? '';
      expect(planId).not.toBe('');
      const lines = result.stdout.split('\n');
      expect(lines).toContain('objects              120');
      expect(lines).toContain('versions             120');
      expect(lines).toContain('delete markers       0');
      expect(lines).toContain(`bytes                ${bytesExactly(bytes)}`);
      expect(lines).toContain('uploads in progress  0');
      expect(lines).toContain('the deletion would take:');
      expect(result.stdout).toMatch(/^ {2}S3 requests +\d+$/m);
      expect(result.stdout).toMatch(/^ {2}cost +[\d.]+ USD$/m);
      expect(result.stdout).toMatch(/^ {2}time +about \d+s at the stack's worker concurrency$/m);
      expect(
        result.stdout.endsWith(`\nnothing was deleted; to delete: lethe delete ${plannedRef}\n`),
      ).toBe(true);
      expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(
        new RegExp(
          `^lethe: COMPLETED, 120 objects counted \\(.+\\), elapsed \\d+s, plan ${planId}$`,
        ),
      );
      expect(before.size).toBe(120);
      expect(after).toEqual(before);
      expect(shown.stdout).toMatch(/^state +ACTIVE$/m);
    });

    it('plans get --json answers the same exact counts', async () => {
      // Arrange
      const dryRun = await lethe([
        'delete',
        plannedRef,
        '--dry-run',
        '--json',
        '--interval',
        '0.25',
      ]);
      const plan = JSON.parse(dryRun.stdout) as { planId: string };

      // Act
      const result = await lethe(['plans', 'get', 'acme', plan.planId, '--json']);

      // Assess
      expect(dryRun.code).toBe(0);
      expect(dryRun.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        planId: plan.planId,
        state: 'COMPLETED',
        objects: 120,
        versions: 120,
        deleteMarkers: 0,
        multipartUploads: 0,
      });
    });
  });

  describe('certificates', () => {
    const certificate = () => join(workdir, 'cert.json');
    const INVALID =
      /^INVALID: the certificate was changed after it was signed, or was not signed by \S+\n$/;

    it('saves the certificate of the COMPLETED deletion; verify exits 0, and 10 once a digit changes', async () => {
      // Arrange
      const tampered = join(workdir, 'tampered.json');

      // Act
      const saved = await lethe([
        'deletions',
        'certificate',
        'acme',
        deletionId,
        '--out',
        certificate(),
      ]);
      const valid = await lethe(['verify', certificate()]);
      const text = await readFile(certificate(), 'utf8');
      await writeFile(
        tampered,
        text.replace(/"objectsDeleted": (\d*)(\d)/, (_, head: string, last: string) => {
          return `"objectsDeleted": ${head}${(Number(last) + 1) % 10}`;
        }),
      );
      const invalid = await lethe(['verify', tampered]);

      // Assess
      expect(saved.code).toBe(0);
      expect(saved.stdout).toBe(
        `saved the certificate of deletion ${deletionId} (${ref}, ${formatCount(deleted.objects)} objects) to ${certificate()}\n` +
          `check it: lethe verify ${certificate()}\n`,
      );
      const signed = JSON.parse(text);
      expect(signed).toMatchObject({
        certificate: {
          deletionId,
          tenant: 'acme',
          stream,
          objectsDeleted: deleted.objects,
          bytesDeleted: deleted.bytes,
        },
        algorithm: 'ECDSA_SHA_256',
      });
      expect(text).toBe(`${JSON.stringify(signed, null, 2)}\n`);
      expect(valid.code).toBe(0);
      expect(valid.stdout).toBe(
        `valid: deletion ${deletionId} of ${ref}, ${formatCount(deleted.objects)} objects, completed ${signed.certificate.completedAt}, signed by ${signed.keyId}\n`,
      );
      expect(await readFile(tampered, 'utf8')).not.toBe(text);
      expect(invalid.code).toBe(10);
      expect(invalid.stdout).toMatch(INVALID);
    });

    it('verify --key with the PEM of certificate-key works offline: nothing is sent', async () => {
      // Arrange: the key from the API, then an endpoint where nothing listens.
      const pem = join(workdir, 'key.pem');
      const key = await lethe(['certificate-key']);
      await writeFile(pem, key.stdout);
      const nowhere = ['--endpoint', `http://127.0.0.1:${await freePort()}`];

      // Act
      const offline = await lethe(['verify', certificate(), '--key', pem, ...nowhere]);
      const tampered = await lethe([
        'verify',
        join(workdir, 'tampered.json'),
        '--key',
        pem,
        ...nowhere,
      ]);
      const unreachable = await lethe(['certificate-key', ...nowhere]);

      // Assess
      expect(key.code).toBe(0);
      expect(key.stdout).toMatch(
        /^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/,
      );
      expect(offline.stderr).toBe('');
      expect(offline.code).toBe(0);
      expect(offline.stdout).toMatch(new RegExp(`^valid: deletion ${deletionId} of ${ref}, `));
      // A PEM names no key id: the verdict names the file it checked against.
      expect(offline.stdout.endsWith(`, signed by the key in ${pem}\n`)).toBe(true);
      expect(tampered.code).toBe(10);
      expect(tampered.stdout).toBe(
        `INVALID: the certificate was changed after it was signed, or was not signed by the key in ${pem}\n`,
      );
      // The same endpoint, for a command that does send: it cannot be reached.
      expect(unreachable.code).toBe(6);
    });

    it('exits 4 for the certificate of a deletion not yet COMPLETED, and for its dry run', async () => {
      // Arrange: a deletion that waits out a grace window.
      const early = `acme/${stream}-e`;
      expect((await lethe(['streams', 'create', early])).code).toBe(0);
      const scheduled = await lethe(['delete', early, '--grace', '1h']);
      const id = /\(deletion ([0-9a-f-]{36})\)/.exec(scheduled.stdout)?.[1] ?? '';

      // Act
      const result = await lethe(['deletions', 'certificate', 'acme', id]);
      const dryRun = await lethe(['delete', early, '--dry-run']);
      await lethe(['deletions', 'cancel', 'acme', id]);

      // Assess
      expect(result.code).toBe(4);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        [
          `lethe: DeletionNotCompleted: deletion ${id} is SCHEDULED: only a COMPLETED deletion has a certificate (HTTP 409)`,
          `a deletion has a certificate once it is COMPLETED: follow it with lethe deletions get acme ${id}`,
          '',
        ].join('\n'),
      );
      expect(dryRun.code).toBe(4);
      expect(dryRun.stderr).toMatch(/^lethe: StreamDeleting: /);
    });
  });
  describe('seed, partitions and retention', () => {
    /** A new stream, and where its objects are. */
    const created = async (name: string) => {
      expect((await lethe(['streams', 'create', `acme/${name}`])).code).toBe(0);
      const view = JSON.parse((await lethe(['streams', 'get', `acme/${name}`, '--json'])).stdout);
      return parseLocation(String(view.location));
    };

    it('seed --objects 40 stores 40 more objects, and says where', async () => {
      // Arrange
      const seeded = `${stream}-s`;
      const where = await created(seeded);
      await lethe(['ingest', `acme/${seeded}`, '-'], { input: '[{"before":true}]' });
      const before = await listAll(target.s3, where.bucket, where.prefix);

      // Act
      const result = await lethe([
        'seed',
        `acme/${seeded}`,
        '--objects',
        '40',
        '--concurrency',
        '8',
      ]);
      const after = await listAll(target.s3, where.bucket, where.prefix);

      // Assess
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(
        `seeded 40 objects into acme/${seeded} (s3://${where.bucket}/${where.prefix})\n`,
      );
      expect(result.stderr).toMatch(/^lethe: seeded 0 of 40 objects\n/);
      expect(before.size).toBe(1);
      expect(after.size).toBe(41);
      const today = `${where.prefix}dt=${dayOf(new Date())}/`;
      expect([...after.keys()].filter((key) => key.startsWith(today))).toHaveLength(41);
    });

    it('seed exits 3 for a stream that does not exist, with the command that creates it', async () => {
      // Act
      const result = await lethe(['seed', 'acme/no-such-stream', '--objects', '5']);

      // Assess
      expect(result.code).toBe(3);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        [
          'lethe: StreamNotFound: stream acme/no-such-stream does not exist (HTTP 404)',
          'hint: create it first: lethe streams create acme/no-such-stream',
          '',
        ].join('\n'),
      );
    });

    it('partitions delete --before today --wait deletes the past partitions and keeps today', async () => {
      // Arrange: 60 objects in three past days, written straight to S3, and 5 seeded today.
      openGate();
      const name = `${stream}-d`;
      const ref = `acme/${name}`;
      const where = await created(name);
      const past = partitionedObjects(where.prefix, 60, 3);
      const bytes = await seedObjects(target.s3, where.bucket, past);
      expect((await lethe(['seed', ref, '--objects', '5'])).code).toBe(0);
      const today = dayOf(new Date());

      // Act
      const result = await lethe([
        'partitions',
        'delete',
        ref,
        '--before',
        today,
        '--wait',
        '--interval',
        '0.25',
      ]);
      const left = [...(await listAll(target.s3, where.bucket, where.prefix)).keys()];
      const view = await lethe(['streams', 'get', ref]);

      // Assess
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(
          `^COMPLETED ${ref} partitions before ${today}: 60 objects \\(${formatBytes(bytes).replace('.', '\\.')}\\) ` +
            'deleted in [\\d.]+s, those partitions verified empty \\(deletion [0-9a-f-]{36}, attempts \\d+\\)\\n$',
        ),
      );
      expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(
        /^lethe: COMPLETED, 60 objects deleted(, [\d,]+ objects\/s)?, elapsed \d+s, deletion [0-9a-f-]{36}$/,
      );
      expect(left).toHaveLength(5);
      expect(left.every((key) => key.startsWith(`${where.prefix}dt=${today}/`))).toBe(true);
      expect(view.stdout).toMatch(/^state +ACTIVE$/m);
      expect(view.stdout).not.toMatch(/^partitions /m);
    });

    it('partitions delete: exit 2 for a malformed --before, 7 for one after today', async () => {
      // Arrange
      const ref = `acme/${stream}-d`;
      const tomorrow = dayOf(new Date(Date.now() + 86_400_000));

      // Act
      const malformed = await lethe(['partitions', 'delete', ref, '--before', '2026-02-30']);
      const late = await lethe(['partitions', 'delete', ref, '--before', tomorrow]);

      // Assess
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toBe(
        `lethe: --before must be a day, YYYY-MM-DD (got "2026-02-30")\nRun 'lethe --help' for usage.\n`,
      );
      expect(late.code).toBe(7);
      expect(late.stderr).toMatch(
        /^lethe: InvalidCutoff: before must not be after today, .* \(HTTP 400\)\n$/,
      );
    });

    it('streams retention sets the policy that streams get shows, and --off removes it', async () => {
      // Arrange
      const name = `${stream}-r`;
      const ref = `acme/${name}`;
      await created(name);

      // Act
      const set = await lethe(['streams', 'retention', ref, '30']);
      const shown = await lethe(['streams', 'get', ref]);
      const json = await lethe(['streams', 'get', ref, '--json']);
      const off = await lethe(['streams', 'retention', ref, '--off']);
      const gone = await lethe(['streams', 'get', ref, '--json']);
      const bad = await lethe(['streams', 'retention', ref, '0']);

      // Assess
      expect(set.code).toBe(0);
      expect(set.stdout).toBe(
        `${ref} keeps 30 days of partitions; older ones are deleted every day\n`,
      );
      expect(shown.stdout).toMatch(/^retention +30 days$/m);
      expect(JSON.parse(json.stdout)).toMatchObject({ retentionDays: 30, state: 'ACTIVE' });
      expect(off.code).toBe(0);
      expect(off.stdout).toBe(
        `${ref} has no retention policy: its partitions are kept until deleted\n`,
      );
      expect(JSON.parse(gone.stdout).retentionDays).toBeUndefined();
      expect(bad.code).toBe(2);
    });
  });
});
