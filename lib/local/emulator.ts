import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { basename, delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class EmulatorMissingError extends Error {
  override readonly name = 'EmulatorMissingError';
  /** `tried`: the Pythons that could not `import moto`, when looking for one for the launcher. */
  constructor(command: string, tried?: string[]) {
    super(
      [
        tried
          ? `No Python that can import ${command} was found (tried: ${tried.join(', ')}); Lethe's local stack runs against an AWS emulator.`
          : `${command} was not found on PATH; Lethe's local stack runs against an AWS emulator.`,
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

/**
 * Lethe's launcher of moto's server: moto with named patches where it differs from AWS's
 * documented behaviour (each explained in the file, each tested by
 * test/integration/emulator-fixes.test.ts). It takes moto_server's arguments.
 */
export const MOTO_LAUNCHER = fileURLToPath(new URL('./moto/lethe_moto.py', import.meta.url));

export interface StartMotoOptions {
  /**
   * Run exactly this command instead of the launcher (`-H 127.0.0.1 -p PORT` appended). The
   * escape hatch: default env LETHE_MOTO_SERVER (e.g. `moto_server` for moto without patches).
   */
  command?: string;
  /** The Python that runs the launcher; default: `findMotoPython()`. */
  python?: string;
  /**
   * Fault modes of the launcher, by name, each with its rate or size (lethe_moto.py lists them
   * under FAULT MODES): what AWS does that moto does not, turned on by the tests that model it.
   * Passed as LETHE_MOTO_FAULTS; none by default.
   */
  faults?: Readonly<Record<string, number>>;
  /** Seed of the launcher's fault draws, so a run's faults can be replayed. Default 1. */
  faultSeed?: number;
}

/** Every emulator this process started and that still runs, for a stop before a stack has them. */
const started = new Set<ChildProcess>();

/**
 * Stops every emulator this process started: for a signal that comes while a stack is still
 * starting, before anything holds them (a child outlives a process that is killed).
 */
export async function stopStartedEmulators(): Promise<void> {
  await Promise.all([...started].map(stopChild));
}

/**
 * Starts moto's server, through Lethe's launcher, as a child process on a free loopback port
 * and waits until it answers. A string is `{ command }`: that command instead of the launcher.
 */
export async function startMoto(options: string | StartMotoOptions = {}): Promise<Emulator> {
  const {
    command = process.env.LETHE_MOTO_SERVER || undefined,
    python,
    faults,
    faultSeed,
  } = typeof options === 'string' ? { command: options } : options;
  const [program, launcher] = command
    ? [command, []]
    : [python ?? (await findMotoPython()), [MOTO_LAUNCHER]];
  const label = command ?? `${program} ${MOTO_LAUNCHER}`;
  const port = await freePort();
  const child = spawn(program, [...launcher, '-H', '127.0.0.1', '-p', String(port)], {
    // The launcher exits once this process has gone, a SIGKILL of it too (no stop runs then).
    env: {
      ...process.env,
      LETHE_MOTO_EXIT_WITH_PARENT: '1',
      ...(faults ? { LETHE_MOTO_FAULTS: JSON.stringify(faults) } : {}),
      ...(faultSeed !== undefined ? { LETHE_MOTO_FAULT_SEED: String(faultSeed) } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new EmulatorMissingError(program) : error),
    );
  });
  await spawned;
  const endpoint = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) {
      throw new Error(`${label} exited with ${child.exitCode}: ${stderr}`);
    }
    try {
      const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 150) {
      await stopChild(child);
      throw new Error(`${label} did not answer on ${endpoint} within 30 s: ${stderr}`);
    }
    await sleep(200);
  }
  return {
    endpoint,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
  };
}

/** The emulators of a local stack: S3 in a process of its own, the other services in another. */
export interface Emulators {
  /** DynamoDB and its streams, SQS, EventBridge, KMS: `AWS_ENDPOINT_URL`. */
  readonly main: Emulator;
  /** S3 alone: `AWS_ENDPOINT_URL_S3`. */
  readonly s3: Emulator;
  stop(): Promise<void>;
}

/**
 * Starts two moto processes, as AWS runs its services apart: S3 in one, everything else in the
 * other, so that the pipeline's bookkeeping never queues behind its own deletes (one moto
 * process serves one request at a time on one core). The SDK sends S3 requests to
 * `AWS_ENDPOINT_URL_S3` and the rest to `AWS_ENDPOINT_URL`. `options` as for `startMoto`.
 */
export async function startEmulators(options: string | StartMotoOptions = {}): Promise<Emulators> {
  const [main, s3] = await Promise.allSettled([startMoto(options), startMoto(options)]);
  if (main.status === 'rejected' || s3.status === 'rejected') {
    await Promise.all(
      [main, s3].map((started) => (started.status === 'fulfilled' ? started.value.stop() : null)),
    );
    throw main.status === 'rejected' ? main.reason : (s3 as PromiseRejectedResult).reason;
  }
  return {
    main: main.value,
    s3: s3.value,
    stop: async () => {
      await Promise.all([main.value.stop(), s3.value.stop()]);
    },
  };
}

/**
 * The endpoints a local stack uses, and exports for the SDK (`AWS_ENDPOINT_URL`, and
 * `AWS_ENDPOINT_URL_S3` when S3 is apart): the given ones, else the environment's, else two
 * emulators started here (returned, to be stopped with the stack).
 */
export async function emulatorsFor(
  given: { endpoint?: string; s3Endpoint?: string },
  log: (message: string) => void,
): Promise<{ endpoint: string; s3Endpoint: string; emulators?: Emulators }> {
  let emulators: Emulators | undefined;
  let endpoint = given.endpoint ?? process.env.AWS_ENDPOINT_URL;
  let s3Endpoint =
    given.s3Endpoint ?? (given.endpoint ? undefined : process.env.AWS_ENDPOINT_URL_S3);
  if (!endpoint) {
    emulators = await startEmulators();
    endpoint = emulators.main.endpoint;
    s3Endpoint = emulators.s3.endpoint;
    log(
      `started moto (pid ${emulators.main.pid}) on ${endpoint} and moto for S3 (pid ${emulators.s3.pid}) on ${s3Endpoint}`,
    );
  }
  process.env.AWS_ENDPOINT_URL = endpoint;
  if (s3Endpoint) process.env.AWS_ENDPOINT_URL_S3 = s3Endpoint;
  else delete process.env.AWS_ENDPOINT_URL_S3;
  return { endpoint, s3Endpoint: s3Endpoint ?? endpoint, ...(emulators ? { emulators } : {}) };
}

/**
 * A Python that can `import moto`, to run the launcher: env LETHE_MOTO_PYTHON if set (then only
 * that one); else the interpreter of the `moto_server` on PATH, from its shebang (a pyenv shim's
 * shebang is a shell: `pyenv which moto_server` names the real script); else `python3`.
 * Throws EmulatorMissingError when none can import moto.
 */
export async function findMotoPython(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const candidates = env.LETHE_MOTO_PYTHON
    ? [env.LETHE_MOTO_PYTHON]
    : [await motoServerPython(env), 'python3'];
  const tried: string[] = [];
  for (const python of candidates) {
    if (!python || tried.includes(python)) continue;
    if ((await run(python, ['-c', 'import moto'], env)) !== undefined) return python;
    tried.push(python);
  }
  throw new EmulatorMissingError('moto', tried);
}

/** The interpreter in the shebang of the `moto_server` found on PATH, if any. */
async function motoServerPython(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const executable = (path: string) =>
    access(path, constants.X_OK).then(
      () => path,
      () => '',
    );
  const directories = (env.PATH ?? '').split(delimiter).filter(Boolean);
  let script: string | undefined;
  for (const directory of directories) {
    script ||= await executable(join(directory, 'moto_server'));
  }
  let interpreter = script ? await shebang(script) : undefined;
  if (interpreter && /^(ba|da|k|z)?sh$/.test(basename(interpreter))) {
    // A shell wrapper, as pyenv's shims are: ask pyenv for the script the shim runs.
    const real = (await run('pyenv', ['which', 'moto_server'], env))?.trim();
    interpreter = real ? await shebang(real) : undefined;
  }
  return interpreter;
}

/** `#!/usr/bin/python3` → /usr/bin/python3; `#!/usr/bin/env python3` → python3. */
async function shebang(path: string): Promise<string | undefined> {
  const file = await open(path, 'r').catch(() => undefined);
  if (!file) return undefined;
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(256), 0, 256, 0);
    const line = buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '';
    if (!line.startsWith('#!')) return undefined;
    const [program, ...args] = line.slice(2).trim().split(/\s+/);
    if (program && basename(program) === 'env') return args.find((arg) => !arg.startsWith('-'));
    return program || undefined;
  } finally {
    await file.close();
  }
}

/** Runs a program briefly: its stdout if it exits 0, undefined otherwise. */
function run(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(program, args, { env, timeout: 30_000 }, (error, stdout) =>
      resolve(error ? undefined : stdout),
    );
  });
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
