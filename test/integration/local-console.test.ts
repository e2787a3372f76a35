import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMotoPython, freePort, MOTO_LAUNCHER } from '../../lib/local/emulator.ts';
import { apiClient, waitFor } from '../helpers/http.ts';
import { killProcess, type RuntimeProcess, startRuntimeProcess } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** `npm start` as a new user meets it: a busy port, and what it prints while it runs. */
describe('npm start', () => {
  it('says which port is busy and how to pick another, and exits 3', async () => {
    // Arrange: something already listens on the port
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', () => resolve()));
    try {
      // Act
      const child = spawn(process.execPath, ['--import', 'tsx', 'lib/local/main.ts'], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

      // Assess
      expect(code).toBe(3);
      expect(stderr).toContain(`port ${port} is already in use`);
      expect(stderr).toContain(`PORT=${port + 1} npm start`);
      expect(stderr).not.toMatch(/EADDRINUSE|at .*\(/);
    } finally {
      holder.close();
    }
  });

  describe('while it runs', () => {
    let runtime: RuntimeProcess;

    beforeAll(async () => {
      runtime = await startRuntimeProcess({
        LETHE_LOCAL_PREFIX: `c${randomUUID().slice(0, 8)}`,
        LETHE_SWEEP_INTERVAL_SECONDS: '2',
      });
    });
    afterAll(async () => {
      if (runtime) await killProcess(runtime, 'SIGINT');
    });

    it('says what it does while it starts, with no long silence', () => {
      const output = runtime.output();
      // The suite's emulators are given to it: no `started moto` line here.
      const order = ['synthesizing the stack', 'synthesized in', 'created in', 'API ready'].map(
        (line) => output.indexOf(line),
      );

      expect(order.every((at) => at >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    });

    it('prints the LETHE_ENDPOINT the CLI needs on a port other than 3000', () => {
      expect(runtime.output()).toContain(`export LETHE_ENDPOINT=${runtime.url}`);
    });

    it('prints one line per request and per deletion state change', async () => {
      // Act
      const api = apiClient(runtime.url);
      await api.create('acme', 'console');
      const { body } = await api.delete('acme', 'console');

      // Assess
      const id = String(body.deletionId);
      await waitFor('the COMPLETED line', async () =>
        runtime.output().includes(`deletion ${id} of acme/console: RUNNING -> COMPLETED`)
          ? true
          : undefined,
      );
      expect(runtime.output()).toMatch(/PUT \/v1\/tenants\/acme\/streams\/console 201 \d+ms/);
      expect(runtime.output()).toMatch(/DELETE \/v1\/tenants\/acme\/streams\/console 202 \d+ms/);
      expect(runtime.output()).toContain(`deletion ${id} of acme/console: PENDING`);
    });
  });
});

/** A seed of thousands of objects would bury the state changes under request lines. */
describe('npm start with LETHE_QUIET=requests', () => {
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    runtime = await startRuntimeProcess({
      LETHE_LOCAL_PREFIX: `q${randomUUID().slice(0, 8)}`,
      LETHE_QUIET: 'requests',
    });
  });
  afterAll(async () => {
    if (runtime) await killProcess(runtime, 'SIGINT');
  });

  it('prints the state changes and no request line', async () => {
    // Act
    const api = apiClient(runtime.url);
    await api.create('acme', 'quiet');
    const { body } = await api.delete('acme', 'quiet');

    // Assess
    const id = String(body.deletionId);
    await waitFor('the COMPLETED line', async () =>
      runtime.output().includes(`deletion ${id} of acme/quiet: RUNNING -> COMPLETED`)
        ? true
        : undefined,
    );
    expect(runtime.output()).not.toMatch(/PUT \/v1\/tenants\/acme\/streams\/quiet/);
    expect(runtime.output()).not.toMatch(/DELETE \/v1\/tenants\/acme\/streams\/quiet/);
  });
});

/** The launcher started by hand, as the README's recipe for a kept emulator does. */
describe('the moto launcher', () => {
  it('says where it listens, with which moto', { timeout: 60_000 }, async () => {
    // Arrange
    const port = await freePort();
    const child = spawn(
      await findMotoPython(),
      [MOTO_LAUNCHER, '-H', '127.0.0.1', '-p', String(port)],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    try {
      // Act
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('\n')) resolve();
        });
        child.once('exit', () => reject(new Error(`the launcher exited: ${stderr}`)));
      });
    } finally {
      child.kill('SIGKILL');
    }

    // Assess
    expect(stderr).toMatch(
      new RegExp(
        `^lethe_moto: moto 5\\.2\\.\\d+ with \\d+ patches on http://127\\.0\\.0\\.1:${port}\\n`,
      ),
    );
  });
});
