import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudFormationClient,
  CreateStackCommand,
  DeleteStackCommand,
} from '@aws-sdk/client-cloudformation';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBytes } from '../../lib/cli/progress.ts';
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
  /** Called with stderr as it grows (progress lines). */
  onStderr?: (stderr: string) => void;
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
        options.onStderr?.(stderr);
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(options.input ?? '');
    });

  beforeAll(async () => {
    target = await startTarget({
      settings: { LETHE_PAGE_SIZE: '50' },
      wrapClients: (clients) => {
        clients.s3.middlewareStack.add(
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
    expect(result.stdout).toContain('  lethe delete TENANT/STREAM [--wait]');
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
        `^stored ${count} events in streams/${ref}/1/dt=\\d{4}-\\d{2}-\\d{2}/\\S+\\.json\\n$`,
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

  it('exits 4 when creating or ingesting while the deletion runs', async () => {
    // Act
    const create = await lethe(['streams', 'create', ref]);
    const ingest = await lethe(['ingest', ref, '-', '--json'], { input: '[{"late":true}]' });

    // Assess
    const message = `stream ${ref} is being deleted; retry after the deletion completes`;
    expect(create.code).toBe(4);
    expect(create.stderr).toBe(`lethe: StreamDeleting: ${message} (HTTP 409)\n`);
    expect(ingest.code).toBe(4);
    expect(JSON.parse(ingest.stdout)).toEqual({ error: { code: 'StreamDeleting', message } });
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
          `deleted in \\d+s, location verified empty \\(deletion ${deletionId}, attempts \\d+\\)\\n$`,
      ),
    );
    const progress = result.stderr.trimEnd().split('\n');
    expect(progress[0]).toMatch(/^lethe: (PENDING|RUNNING), \d+ objects deleted, /);
    expect(progress.at(-1)).toMatch(
      new RegExp(
        `^lethe: COMPLETED, ${deleted.objects} objects deleted, [\\d,]+ objects/s, elapsed \\d+s$`,
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
    expect(result.stderr).toBe(`lethe: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`);
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
});
