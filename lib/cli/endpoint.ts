import { UsageError } from './values.ts';

/** Where `npm start` serves the local stack. */
export const LOCAL_ENDPOINT = 'http://127.0.0.1:3000';
/** The stack whose ApiUrl is read when there is no --endpoint or LETHE_ENDPOINT. */
export const DEFAULT_STACK = 'Lethe';

/** The `ApiUrl` output of a CloudFormation stack, or why there is none. */
export type StackLookup = (stackName: string) => Promise<{ url: string } | { reason: string }>;

/** The endpoint, and where it came from: said when it cannot be reached. */
export type EndpointChoice =
  | { readonly url: string; readonly source: 'flag' | 'env' }
  | { readonly url: string; readonly source: 'stack'; readonly stack: string }
  /** `stack` is the stack that could not be read, for `reason`. */
  | {
      readonly url: string;
      readonly source: 'local';
      readonly stack: string;
      readonly reason: string;
    };

/** The endpoint cannot be had: a stack named by `--stack` without an ApiUrl. */
export class EndpointError extends Error {
  override readonly name = 'EndpointError';
}

export interface EndpointOptions {
  /** `--endpoint` */
  readonly flag?: string | undefined;
  /** `LETHE_ENDPOINT` */
  readonly env?: string | undefined;
  /** `--stack`: when given, a stack that cannot be read is an error instead of a fallback. */
  readonly stack?: string | undefined;
  readonly lookupStack: StackLookup;
}

/**
 * `--endpoint`, else LETHE_ENDPOINT, else the deployed stack's ApiUrl, else the local stack.
 * A malformed `--endpoint` or LETHE_ENDPOINT is a UsageError.
 */
export async function resolveEndpoint(options: EndpointOptions): Promise<EndpointChoice> {
  // Given empty (`--endpoint ''`) is given all the same: refused, not passed over.
  if (options.flag !== undefined) {
    return { url: checked(options.flag, '--endpoint', usage), source: 'flag' };
  }
  if (options.env) return { url: checked(options.env, 'LETHE_ENDPOINT', usage), source: 'env' };
  if (options.stack === '') throw new UsageError('--stack needs the name of a stack');
  const stack = options.stack ?? DEFAULT_STACK;
  const found = await options.lookupStack(stack);
  if ('url' in found) {
    const url = checked(found.url, `the ApiUrl output of stack ${stack}`, unusable);
    return { url, source: 'stack', stack };
  }
  if (options.stack) {
    throw new EndpointError(
      `cannot read the ApiUrl of stack ${options.stack}: ${found.reason}\n` +
        'hint: pass --endpoint URL or set LETHE_ENDPOINT to skip the stack',
    );
  }
  return { url: LOCAL_ENDPOINT, source: 'local', stack, reason: found.reason };
}

/** Where the endpoint came from, in words. */
export function describeSource(choice: EndpointChoice): string {
  switch (choice.source) {
    case 'flag':
      return 'the endpoint came from --endpoint';
    case 'env':
      return 'the endpoint came from LETHE_ENDPOINT';
    case 'stack':
      return `the endpoint came from the ApiUrl output of stack ${choice.stack}`;
    case 'local':
      return `the endpoint is the local default: no --endpoint, no LETHE_ENDPOINT, and no ApiUrl from stack ${choice.stack} (${choice.reason})`;
  }
}

/** What to do when nothing answers at the endpoint. */
export function unreachableHint(choice: EndpointChoice): string {
  switch (choice.source) {
    case 'flag':
      return 'hint: start the local stack with `npm start`, or check --endpoint';
    case 'env':
      return 'hint: start the local stack with `npm start`, or check LETHE_ENDPOINT';
    case 'stack':
      return `hint: check that stack ${choice.stack} is deployed, or set LETHE_ENDPOINT`;
    case 'local':
      return 'hint: start the local stack with `npm start`, or set LETHE_ENDPOINT';
  }
}

const usage = (message: string) => new UsageError(message);
const unusable = (message: string) => new EndpointError(message);

function checked(url: string, from: string, failure: (message: string) => Error): string {
  if (url === '') throw failure(`${from} is empty: give the API's URL, e.g. ${LOCAL_ENDPOINT}`);
  // `localhost:3000` parses as a URL of scheme `localhost:`: say what was surely meant.
  const meant = /^[\w.-]+:\d+(\/.*)?$/.test(url) ? ` (did you mean http://${url}?)` : '';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw failure(`${from} is not a URL: ${url}${meant}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw failure(`${from} must be an http or https URL: ${url}${meant}`);
  }
  // Each request appends its path: a query or fragment would swallow it, and fetch refuses
  // a user name or password (not echoed here) outright.
  if (parsed.username || parsed.password) {
    throw failure(
      `${from} must not hold a user name or password: requests to AWS are signed with SigV4 instead`,
    );
  }
  if (parsed.search || parsed.hash || url.includes('?') || url.includes('#')) {
    throw failure(
      `${from} must not have a query or fragment: every request adds its own path and query (got ${url})`,
    );
  }
  return url.replace(/\/+$/, '');
}

/**
 * For an endpoint that answered "no such route": every path the CLI asks for begins with /v1,
 * so a base URL that ends in /v1 itself asks for /v1/v1/... (a custom domain may map a base
 * path of v1 on purpose, so it is a hint, not a refusal).
 */
export function routeHint(choice: EndpointChoice): string[] {
  if (!/\/v1$/.test(choice.url)) return [];
  return [
    `hint: the endpoint ends in /v1, which every request adds itself: try ${choice.url.slice(0, -3)}`,
  ];
}
