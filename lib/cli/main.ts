import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { type Command, parseInvocation, UsageError } from './args.ts';
import { verify, type WriteOutput } from './certificates.ts';
import { type Fetch, LetheClient } from './client.ts';
import { execute, type Interrupts } from './commands.ts';
import { type EndpointChoice, resolveEndpoint, type StackLookup } from './endpoint.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { describeFailure, NoCredentialsError } from './failure.ts';
import { HELP, topicHelp } from './help.ts';
import { readInput } from './input.ts';
import type { Output } from './progress.ts';
import { type CredentialsProvider, createSigner, needsSigning, regionOfHost } from './signing.ts';

/** Everything the CLI touches outside itself, so that tests can stand in for each part. */
export interface CliDependencies {
  readonly env: Record<string, string | undefined>;
  readonly stdout: Output;
  readonly stderr: Output;
  readonly fetch: Fetch;
  /** Milliseconds since some fixed point: elapsed times and rates. */
  readonly now: () => number;
  /** Resolves after `ms`, or rejects as soon as `signal` aborts. */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly readInput: (file: string) => Promise<Uint8Array>;
  readonly lookupStack: (region: string | undefined) => StackLookup;
  readonly credentials: () => CredentialsProvider;
  /** The region of the SDK's configuration chain, for endpoints whose host does not name one. */
  readonly configuredRegion: (region: string | undefined) => Promise<string | undefined>;
  /**
   * Milliseconds since the epoch, read once: the countdown to a SCHEDULED deletion goes on
   * from it by `now`. @default Date.now
   */
  readonly wallClock?: () => number;
  /** Ctrl-C: while waiting, it stops the wait (exit 130) and leaves the deletion running. */
  readonly interrupts?: Interrupts;
  /** Writes the file of `--out`. @default the file system */
  readonly writeOutput?: WriteOutput;
}

/** Runs `lethe` with these arguments and returns its exit code. */
export async function run(argv: readonly string[], deps: CliDependencies): Promise<ExitCode> {
  let json = false;
  let endpoint: EndpointChoice | undefined;
  let command: Command | undefined;
  try {
    const invocation = parseInvocation(argv);
    command = invocation.command;
    const { options } = invocation;
    json = options.json;
    if (command.kind === 'help') {
      deps.stdout.write(command.topic ? topicHelp(command.topic) : HELP);
      return EXIT.ok;
    }
    if (command.kind === 'version') {
      deps.stdout.write(`lethe ${await packageVersion()}\n`);
      return EXIT.ok;
    }
    /** The client, once a command needs the API: `verify --key` never does. */
    const connect = async () => {
      endpoint = await resolveEndpoint({
        flag: options.endpoint,
        env: deps.env.LETHE_ENDPOINT,
        stack: options.stack,
        lookupStack: deps.lookupStack(options.region),
      });
      const url = new URL(endpoint.url);
      return new LetheClient({
        endpoint: endpoint.url,
        fetch: deps.fetch,
        ...(needsSigning(url) ? { sign: await signerFor(url, options.region, deps) } : {}),
      });
    };
    if (command.kind === 'verify') {
      return await verify(command, {
        json,
        stdout: deps.stdout,
        stderr: deps.stderr,
        readInput: deps.readInput,
        keyFor: async (keyId) => (await (await connect()).getCertificateKey(keyId)).body,
      });
    }
    return await execute(command, {
      client: await connect(),
      json: options.json,
      intervalMs: options.intervalMs,
      stdout: deps.stdout,
      stderr: deps.stderr,
      now: deps.now,
      wallNow: wallClockOf(deps),
      sleep: deps.sleep,
      interrupts: deps.interrupts,
      readInput: deps.readInput,
      writeOutput: deps.writeOutput ?? writeText,
    });
  } catch (error) {
    const tenant = command && 'tenant' in command ? command.tenant : undefined;
    const failure = describeFailure(error, {
      json,
      endpoint,
      tenant,
      debug: Boolean(deps.env.LETHE_DEBUG),
    });
    if (failure.stdout) deps.stdout.write(failure.stdout);
    deps.stderr.write(`lethe: ${failure.lines.join('\n')}\n`);
    return failure.code;
  }
}

/** The version of the package this `lethe` runs from: what a bug report names. */
async function packageVersion(): Promise<string> {
  const manifest = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

/** Writes a file of `--out`; one that cannot be written is a usage error, as one unread is. */
async function writeText(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (error) {
    throw new UsageError(`cannot write ${file}: ${error instanceof Error ? error.message : error}`);
  }
}

/** The wall clock, read once and carried on by the monotonic clock. */
function wallClockOf(deps: CliDependencies): () => number {
  const wallStart = (deps.wallClock ?? Date.now)();
  const start = deps.now();
  return () => wallStart + (deps.now() - start);
}

async function signerFor(url: URL, region: string | undefined, deps: CliDependencies) {
  const signingRegion = region ?? regionOfHost(url) ?? (await deps.configuredRegion(undefined));
  if (!signingRegion) {
    throw new NoCredentialsError(
      `no region to sign requests to ${url.host} with: pass --region or set AWS_REGION`,
    );
  }
  const credentials = deps.credentials();
  try {
    await credentials();
  } catch (error) {
    throw new NoCredentialsError(
      `no AWS credentials to sign requests to ${url.host} with: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return createSigner({ region: signingRegion, credentials });
}

/** The real world: process streams, the network, the AWS SDK's configuration. */
export function processDependencies(): CliDependencies {
  return {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    fetch: (input, init) => fetch(input, init),
    now: () => performance.now(),
    sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}),
    wallClock: Date.now,
    // Once: a second Ctrl-C ends the process the default way, at once.
    interrupts: (onInterrupt) => {
      process.once('SIGINT', onInterrupt);
      return () => process.off('SIGINT', onInterrupt);
    },
    writeOutput: writeText,
    readInput: (file) => readInput(file, process.stdin),
    // The AWS SDK takes a second to load: only commands that need it pay for it.
    lookupStack: (region) => async (stackName) =>
      (await import('./aws.ts')).cloudFormationLookup({ region })(stackName),
    credentials: () => {
      let chain: CredentialsProvider | undefined;
      return async () => {
        chain ??= (await import('./aws.ts')).defaultCredentials();
        return chain();
      };
    },
    configuredRegion: async (region) => (await import('./aws.ts')).configuredRegion(region),
  };
}

export const main = (argv: readonly string[]) => run(argv, processDependencies());
