import { UsageError } from './args.ts';
import { ApiError, UnreachableError } from './client.ts';
import {
  describeSource,
  type EndpointChoice,
  EndpointError,
  routeHint,
  unreachableHint,
} from './endpoint.ts';
import { EXIT, type ExitCode, exitCodeForStatus } from './exit-codes.ts';
import { messageOf, streamDeletingHints, tenantHints } from './hints.ts';

/** No AWS credentials, or no region, to sign a request with. */
export class NoCredentialsError extends Error {
  override readonly name = 'NoCredentialsError';
}

/** What the run knew when it failed, to say more than the error itself. */
export interface FailureContext {
  /** `--json`: an API error's body goes to stdout as well. */
  readonly json: boolean;
  /** The endpoint, once chosen. */
  readonly endpoint?: EndpointChoice | undefined;
  /** The tenant the command was about, for the commands a hint suggests. */
  readonly tenant?: string | undefined;
  /** LETHE_DEBUG: an unexpected error's stack, not only its message. */
  readonly debug?: boolean | undefined;
}

/** How a run ends when it fails. */
export interface Failure {
  readonly code: ExitCode;
  /** For stderr: the first line starts with `lethe: `, hints follow on lines of their own. */
  readonly lines: readonly string[];
  /** For stdout, with `--json`. */
  readonly stdout?: string;
}

/** No route answers: the local server's code, and API Gateway's (a 403, deployed). */
const NO_ROUTE = new Set(['RouteNotFound', 'MISSING_AUTHENTICATION_TOKEN']);

/** The exit code and the words for an error that ended a run. */
export function describeFailure(error: unknown, context: FailureContext): Failure {
  if (error instanceof UsageError) {
    return { code: EXIT.usage, lines: [error.message, "Run 'lethe --help' for usage."] };
  }
  if (error instanceof ApiError) {
    return {
      code: exitCodeForStatus(error.status),
      lines: [
        `${error.code}: ${messageOf(error)} (HTTP ${error.status})`,
        ...error.hints,
        ...streamDeletingHints(error, context.tenant),
        ...tenantHints(error, context.tenant),
        ...(NO_ROUTE.has(error.code) && context.endpoint ? routeHint(context.endpoint) : []),
      ],
      ...(context.json && error.raw ? { stdout: `${error.raw}\n` } : {}),
    };
  }
  if (error instanceof UnreachableError) {
    const endpoint = context.endpoint;
    const where = endpoint ? [describeSource(endpoint), unreachableHint(endpoint)] : [];
    return { code: EXIT.unreachable, lines: [error.message, ...where] };
  }
  if (error instanceof EndpointError) return { code: EXIT.unreachable, lines: [error.message] };
  if (error instanceof NoCredentialsError)
    return { code: EXIT.noCredentials, lines: [error.message] };
  if (context.debug) {
    return {
      code: EXIT.unexpected,
      lines: [error instanceof Error ? (error.stack ?? error.message) : String(error)],
    };
  }
  return {
    code: EXIT.unexpected,
    lines: [
      `unexpected error: ${error instanceof Error ? error.message : String(error)}`,
      'hint: run it again with LETHE_DEBUG=1 to see where it happened, and report it',
    ],
  };
}
