import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Whether a process of this id still runs (signal 0 only asks). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm start` stopped while it is still starting (a Ctrl-C that comes too soon, a process
 * manager's SIGTERM): the emulators it started must not outlive it on their ports.
 */
describe('npm start stopped while it starts', () => {
  it('stops the emulators it has started and exits 0', { timeout: 120_000 }, async () => {
    // Arrange: no emulator given, so that it starts its own (the suite's own are in the env).
    const { AWS_ENDPOINT_URL: _main, AWS_ENDPOINT_URL_S3: _s3, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/local/main.ts'], {
      cwd: ROOT,
      env: { ...env, PORT: '0', LETHE_QUIET: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stderr = '';
    const started = new Promise<number[]>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        // Logged once both emulators answer, before the stack's resources are created.
        const pids = /started moto \(pid (\d+)\).*\(pid (\d+)\)/.exec(stderr);
        if (pids) resolve([Number(pids[1]), Number(pids[2])]);
      });
      void exited.then(() => reject(new Error(`npm start exited before its emulators: ${stderr}`)));
    });
    let pids: number[] = [];
    let code: number | null;
    try {
      pids = await started;
      expect(stderr).not.toContain('API ready');

      // Act
      child.kill('SIGTERM');
      code = await exited;
    } finally {
      child.kill('SIGKILL');
    }

    // Assess
    expect(code).toBe(0);
    expect(stderr).toContain('SIGTERM: stopping');
    expect(pids.filter(isRunning)).toEqual([]);
  });
});

/** Ctrl-C in a terminal: SIGINT to the whole process group, the emulators included. */
describe('npm start stopped with Ctrl-C', () => {
  it('says it stops, and nothing about the emulators it lost', { timeout: 180_000 }, async () => {
    // Arrange: a process group of its own, as a terminal's foreground job has.
    const { AWS_ENDPOINT_URL: _main, AWS_ENDPOINT_URL_S3: _s3, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/local/main.ts'], {
      cwd: ROOT,
      env: { ...env, PORT: '0', LETHE_QUIET: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stderr = '';
    const ready = new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('API ready')) resolve();
      });
      void exited.then(() => reject(new Error(`npm start exited before it was ready: ${stderr}`)));
    });
    let code: number | null;
    try {
      await ready;

      // Act
      process.kill(-(child.pid ?? 0), 'SIGINT');
      code = await exited;
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    }

    // Assess
    expect(code).toBe(0);
    const lastLines = stderr.slice(stderr.indexOf('API ready')).trim().split('\n');
    // The lines of a start (ready, the endpoint, where data lives), then only the stop.
    expect(lastLines.at(-1)).toMatch(/lethe: SIGINT: stopping$/);
    expect(stderr).not.toMatch(/ECONNREFUSED|poller/);
  });
});

/** `kill -9` (an OOM kill, a closed CI job): no handler runs, and no stop reaches the children. */
describe('npm start killed with SIGKILL', () => {
  it('leaves no emulator running behind it', { timeout: 180_000 }, async () => {
    // Arrange: a running stack that started its own emulators.
    const { AWS_ENDPOINT_URL: _main, AWS_ENDPOINT_URL_S3: _s3, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/local/main.ts'], {
      cwd: ROOT,
      env: { ...env, PORT: '0', LETHE_QUIET: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    const ready = new Promise<number[]>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const pids = /started moto \(pid (\d+)\).*\(pid (\d+)\)/.exec(stderr);
        if (pids && stderr.includes('API ready')) resolve([Number(pids[1]), Number(pids[2])]);
      });
      void exited.then(() => reject(new Error(`npm start exited before it was ready: ${stderr}`)));
    });
    let pids: number[] = [];
    let left: number[] = [];
    try {
      pids = await ready;
      expect(pids.filter(isRunning)).toHaveLength(2);

      // Act
      child.kill('SIGKILL');
      await exited;
      for (let waited = 0; waited < 10_000 && pids.some(isRunning); waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      left = pids.filter(isRunning);
    } finally {
      child.kill('SIGKILL');
      for (const pid of pids.filter(isRunning)) process.kill(pid, 'SIGKILL');
    }

    // Assess
    expect(left).toEqual([]);
  });
});

/**
 * A process manager's SIGTERM to the npm process of `npm start` alone: npm and its shell end
 * without passing it on, and the runtime under them must stop all the same, its emulators with it.
 */
describe('npm start whose npm process gets SIGTERM', () => {
  it('stops the runtime and its emulators; npm ends by the signal (143)', {
    timeout: 180_000,
  }, async () => {
    // Arrange: `npm start` as a user runs it, in a process group of its own.
    const { AWS_ENDPOINT_URL: _main, AWS_ENDPOINT_URL_S3: _s3, ...env } = process.env;
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...env, PORT: '0', LETHE_QUIET: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    const exited = new Promise<string>((resolve) =>
      child.once('exit', (code, signal) => resolve(signal ?? String(code))),
    );
    let stderr = '';
    const ready = new Promise<{ pids: number[]; url: string }>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const pids = /started moto \(pid (\d+)\).*\(pid (\d+)\)/.exec(stderr);
        const url = /API ready on (\S+)/.exec(stderr)?.[1];
        if (pids && url) resolve({ pids: [Number(pids[1]), Number(pids[2])], url });
      });
      void exited.then(() => reject(new Error(`npm start exited before it was ready: ${stderr}`)));
    });
    let pids: number[] = [];
    let ended = '';
    let answers = true;
    try {
      const started = await ready;
      pids = started.pids;

      // Act: the npm process only, not its group.
      child.kill('SIGTERM');
      ended = await exited;
      for (let waited = 0; waited < 10_000 && pids.some(isRunning); waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      answers = await fetch(`${started.url}/v1/health`, { signal: AbortSignal.timeout(2_000) })
        .then(() => true)
        .catch(() => false);
    } finally {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // the group has gone
        }
      }
      for (const pid of pids.filter(isRunning)) process.kill(pid, 'SIGKILL');
    }

    // Assess
    // A shell reports it as 143, 128 + SIGTERM's number.
    expect(ended).toBe('SIGTERM');
    expect(pids.filter(isRunning)).toEqual([]);
    expect(answers).toBe(false);
  });
});
