import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../lib/local/emulator.ts';
import { waitFor } from './http.ts';

export interface RuntimeProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  output(): string;
}

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Runs `npm start`'s program (lib/local/main.ts) as its own process, in one node process (no
 * wrapper), so that killing it by pid kills the whole runtime.
 */
export async function startRuntimeProcess(env: Record<string, string>): Promise<RuntimeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/local/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'the local runtime to serve its API',
    async () => {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output}`);
      const response = await fetch(`${url}/v1/health`);
      return response.ok ? true : undefined;
    },
    120_000,
    500,
  );
  return { child, pid: child.pid ?? 0, url, output: () => output };
}

/** Sends `signal` to the process by its id and waits for it to exit. */
export async function killProcess(runtime: RuntimeProcess, signal: NodeJS.Signals) {
  if (runtime.child.exitCode !== null || runtime.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => runtime.child.once('exit', () => resolve()));
  process.kill(runtime.pid, signal);
  await exited;
}
