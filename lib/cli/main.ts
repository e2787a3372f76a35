import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { parseInvocation, UsageError } from './args.ts';
import { ApiError, type Fetch, LetheClient, UnreachableError } from './client.ts';
import { execute } from './commands.ts';
import { EndpointError, resolveEndpoint, type StackLookup } from './endpoint.ts';
import { EXIT, type ExitCode, exitCodeForStatus } from './exit-codes.ts';
import { HELP } from './help.ts';
import type { Output } from './progress.ts';
import { type CredentialsProvider, createSigner, needsSigning, regionOfHost } from './signing.ts';

/** Everything the CLI touches outside itself, so that tests can stand in for each part. */
export interface CliDependencies {
  readonly env: Record<string, string | undefined>;
  readonly stdout: Output;
  readonly stderr: Output;
  readonly fetch: Fetch;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly readInput: (file: string) => Promise<Uint8Array>;
  readonly lookupStack: (region: string | undefined) => StackLookup;
  readonly credentials: () => CredentialsProvider;
  /** The region of the SDK's configuration chain, for endpoints whose host does not name one. */
  readonly configuredRegion: (region: string | undefined) => Promise<string | undefined>;
}

class NoCredentialsError extends Error {
  override readonly name = 'NoCredentialsError';
}

/** Runs `lethe` with these arguments and returns its exit code. */
export async function run(argv: readonly string[], deps: CliDependencies): Promise<ExitCode> {
  const fail = (code: ExitCode, message: string) => {
    deps.stderr.write(`lethe: ${message}\n`);
    return code;
  };
  let json = false;
  try {
    const { command, options } = parseInvocation(argv);
    json = options.json;
    if (command.kind === 'help') {
      deps.stdout.write(HELP);
      return EXIT.ok;
    }
    const endpoint = await resolveEndpoint({
      flag: options.endpoint,
      env: deps.env.LETHE_ENDPOINT,
      stack: options.stack,
      lookupStack: deps.lookupStack(options.region),
    });
    const url = new URL(endpoint.url);
    const client = new LetheClient({
      endpoint: endpoint.url,
      fetch: deps.fetch,
      ...(needsSigning(url) ? { sign: await signerFor(url, options.region, deps) } : {}),
    });
    return await execute(command, {
      client,
      json: options.json,
      intervalMs: options.intervalMs,
      stdout: deps.stdout,
      stderr: deps.stderr,
      now: deps.now,
      sleep: deps.sleep,
      readInput: deps.readInput,
    });
  } catch (error) {
    if (error instanceof UsageError) {
      return fail(EXIT.usage, `${error.message}\nRun 'lethe --help' for usage.`);
    }
    if (error instanceof ApiError) {
      if (json && error.raw) deps.stdout.write(`${error.raw}\n`);
      return fail(
        exitCodeForStatus(error.status),
        `${error.code}: ${error.message} (HTTP ${error.status})`,
      );
    }
    if (error instanceof UnreachableError || error instanceof EndpointError) {
      return fail(EXIT.unreachable, error.message);
    }
    if (error instanceof NoCredentialsError) return fail(EXIT.noCredentials, error.message);
    return fail(
      EXIT.unexpected,
      error instanceof Error ? (error.stack ?? error.message) : String(error),
    );
  }
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
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    readInput: async (file) => {
      try {
        return file === '-' ? await buffer(process.stdin) : await readFile(file);
      } catch (error) {
        throw new UsageError(
          `cannot read ${file}: ${error instanceof Error ? error.message : error}`,
        );
      }
    },
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
