import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class EmulatorMissingError extends Error {
  override readonly name = 'EmulatorMissingError';
  constructor(command: string) {
    super(
      [
        `${command} was not found on PATH; Lethe's local stack runs against an AWS emulator.`,
        'Install moto with its server:   pip install "moto[server]"',
        'or start LocalStack (Docker):    docker compose -f localstack.yml up -d',
        '                                 and set AWS_ENDPOINT_URL=http://localhost:4566',
      ].join('\n'),
    );
  }
}

/** A free TCP port on loopback (the kernel picks it; we release it right away). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Emulator {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `moto_server` as a child process on a free loopback port and waits until it answers. */
export async function startMoto(
  command = process.env.LETHE_MOTO_SERVER ?? 'moto_server',
): Promise<Emulator> {
  const port = await freePort();
  const child = spawn(command, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new EmulatorMissingError(command) : error),
    );
  });
  await spawned;
  const endpoint = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) {
      throw new Error(`${command} exited with ${child.exitCode}: ${stderr}`);
    }
    try {
      const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 150) {
      await stopChild(child);
      throw new Error(`${command} did not answer on ${endpoint} within 30 s: ${stderr}`);
    }
    await sleep(200);
  }
  return {
    endpoint,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
  };
}

/** SIGTERM, then SIGKILL if the process has not exited within five seconds. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
