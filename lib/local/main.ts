/**
 * `npm start`: the whole Lethe pipeline on this machine. See README.md, "Local stack".
 *
 *   PORT                                  HTTP API port (default 3000)
 *   AWS_ENDPOINT_URL                      use this emulator instead of starting moto_server
 *   LETHE_SWEEP_INTERVAL_SECONDS          seconds between sweeps (default: the stack's 5 minutes)
 *   LETHE_STALE_AFTER_SECONDS             and every other LETHE_* setting of the functions
 *   LETHE_LOCAL_PREFIX                    prefix of the emulator's resource names (default lethe)
 *   LETHE_LOCAL_VISIBILITY_TIMEOUT_SECONDS   shorter redelivery than the deployed 6 minutes
 *   LETHE_LOCAL_WORKER_CONCURRENCY        concurrent worker invocations
 *   LETHE_LOCAL_LOOP_DETECTION=1          Lambda's recursive loop detection (RecursiveLoop)
 *   LETHE_LOCAL_ACCOUNT_CONCURRENCY       the account's Lambda concurrency: throttles above it
 *   LETHE_FAILPOINTS                      failpoints to arm, e.g. worker.after-delete=crash
 *   LETHE_QUIET=1                         no line per request and per state change
 *   LETHE_QUIET=requests                  state changes only, no line per request
 *   LETHE_LOG_LEVEL                       the functions' structured logs (default WARN)
 *
 * Exits 0 once stopped (Ctrl-C, SIGTERM, or the process that started it gone), 2 when
 * moto_server is missing, 3 when PORT is taken, 1 otherwise. npm itself reports a signal it got
 * as 128 + its number: `npm start` stopped with Ctrl-C exits 130, with SIGTERM 143.
 */

import { createServer } from 'node:net';
import { armFromSpec, ENV } from '../support/index.ts';
import { EmulatorMissingError, stopStartedEmulators } from './emulator.ts';
import { LocalStack, PortInUseError } from './local-stack.ts';
import { type ConsoleLines, consoleLinesOf } from './quiet.ts';

const log = (message: string) => console.error(`${new Date().toISOString()} lethe: ${message}`);
/** Requests and state changes: short lines on stdout, the time of day first. */
const consoleLine = (line: string) =>
  console.log(`${new Date().toISOString().slice(11, 23)} ${line}`);

/** Exit codes of `npm start` (README, "Local stack"). */
const EXIT = { unexpected: 1, emulatorMissing: 2, portInUse: 3 } as const;

/** Fails fast, before an emulator is started, when the API's port is taken. */
function assertPortFree(port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}
/** A setting given wrong: told in one line that names it, not as a stack trace. */
class SettingError extends Error {}

/** LETHE_QUIET read, or a SettingError that names it. */
function consoleLinesOrRefuse(value: string | undefined): ConsoleLines {
  try {
    return consoleLinesOf(value);
  } catch (error) {
    throw new SettingError((error as Error).message);
  }
}

const printedBelow = ({ requests, states }: ConsoleLines) =>
  requests && states
    ? 'requests and state changes print below'
    : states
      ? 'state changes print below (LETHE_QUIET=requests: no request lines)'
      : 'requests and state changes are not printed (LETHE_QUIET)';

/** A whole-number setting from 0 to `max`, or undefined when it is not set. */
const optionalInt = (name: string, max = Number.MAX_SAFE_INTEGER) => {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > max) {
    throw new SettingError(`${name} must be a whole number from 0 to ${max} (got ${value})`);
  }
  return number;
};

// The SDK warns on every start under Node.js 20 that its 2027 releases will need 22: Lethe
// supports 20 to 24 (the functions run on 24 in Lambda), so the console stays clean.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The functions log as they would in Lambda; keep the local console readable by default.
process.env.POWERTOOLS_LOG_LEVEL ??= process.env.LETHE_LOG_LEVEL ?? 'WARN';

let stack: LocalStack | undefined;
let stopping = false;
/**
 * The runtime's own lines, until it stops: a Ctrl-C reaches the emulators too (the terminal
 * signals the whole process group), so a poller that then cannot reach them is no news.
 */
const runtimeLog = (message: string) => {
  if (!stopping) log(message);
};
/**
 * Ctrl-C or SIGTERM, also while the stack is still starting: the emulators it has started so
 * far are stopped too, not left running on their ports after this process.
 */
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping`);
  await (stack ? stack.stop() : stopStartedEmulators());
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

/**
 * A SIGTERM sent to `npm start`'s npm process ends npm and the shell it ran this in, but neither
 * passes it on: this process would run on with its emulators, its parent now another. So it
 * watches its parent id, as the launcher does, and stops once its parent has gone.
 */
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void shutdown('parent exited');
}, 500).unref();

try {
  armFromSpec(process.env.LETHE_FAILPOINTS);
  const settings = Object.fromEntries(
    Object.values(ENV)
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]]),
  );
  const sweepIntervalSeconds = optionalInt('LETHE_SWEEP_INTERVAL_SECONDS');
  const visibilityTimeoutSeconds = optionalInt('LETHE_LOCAL_VISIBILITY_TIMEOUT_SECONDS');
  const workerConcurrency = optionalInt('LETHE_LOCAL_WORKER_CONCURRENCY');
  const accountConcurrency = optionalInt('LETHE_LOCAL_ACCOUNT_CONCURRENCY');
  const loopDetection = /^(1|true|yes)$/i.test(process.env.LETHE_LOCAL_LOOP_DETECTION ?? '');
  const port = optionalInt('PORT', 65_535) ?? 3000;
  const lines = consoleLinesOrRefuse(process.env.LETHE_QUIET);
  await assertPortFree(port);
  stack = await LocalStack.start({
    port,
    namePrefix: process.env.LETHE_LOCAL_PREFIX ?? 'lethe',
    settings,
    ...(sweepIntervalSeconds ? { sweepIntervalSeconds } : {}),
    ...(visibilityTimeoutSeconds !== undefined ? { visibilityTimeoutSeconds } : {}),
    ...(workerConcurrency ? { workerConcurrency } : {}),
    ...(accountConcurrency ? { accountConcurrency } : {}),
    loopDetection,
    log: runtimeLog,
    ...(lines.states ? { console: consoleLine } : {}),
    requestLines: lines.requests,
  });
  const { resources } = stack;
  log(
    stack.s3Endpoint === stack.endpoint
      ? `emulator ${stack.endpoint}`
      : `emulators: S3 ${stack.s3Endpoint}, the other services ${stack.endpoint}`,
  );
  log(`table ${resources.tableName}, bucket ${resources.bucket}`);
  log(`queues ${resources.queues.map((queue) => queue.url.split('/').at(-1)).join(', ')}`);
  log(`API ready on ${stack.url}  (try: curl ${stack.url}/v1/health)`);
  if (port !== 3000) log(`the CLI needs: export LETHE_ENDPOINT=${stack.url}`);
  log(`local data lives as long as this process and its emulator; ${printedBelow(lines)}`);
} catch (error) {
  // A start cut short by a signal ends in shutdown, which says so and exits 0.
  if (!stopping) exitOnError(error);
}

/** Why the stack did not start, in a line where the cause is the user's, and its exit code. */
function exitOnError(error: unknown): never {
  if (error instanceof EmulatorMissingError) {
    console.error(error.message);
    process.exit(EXIT.emulatorMissing);
  }
  if (error instanceof SettingError) {
    console.error(`lethe: ${error.message}`);
    process.exit(EXIT.unexpected);
  }
  if (error instanceof PortInUseError) {
    console.error(`lethe: ${error.message}`);
    process.exit(EXIT.portInUse);
  }
  console.error(error);
  process.exit(EXIT.unexpected);
}
