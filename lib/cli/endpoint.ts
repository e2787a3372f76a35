export const LOCAL_ENDPOINT = 'http://127.0.0.1:3000';
export const DEFAULT_STACK = 'Lethe';

/** The `ApiUrl` output of a CloudFormation stack, or why there is none. */
export type StackLookup = (stackName: string) => Promise<{ url: string } | { reason: string }>;

export interface EndpointChoice {
  readonly url: string;
  readonly source: 'flag' | 'env' | 'stack' | 'local';
}

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

/** `--endpoint`, else LETHE_ENDPOINT, else the deployed stack's ApiUrl, else the local stack. */
export async function resolveEndpoint(options: EndpointOptions): Promise<EndpointChoice> {
  if (options.flag) return { url: checked(options.flag, '--endpoint'), source: 'flag' };
  if (options.env) return { url: checked(options.env, 'LETHE_ENDPOINT'), source: 'env' };
  const found = await options.lookupStack(options.stack ?? DEFAULT_STACK);
  if ('url' in found)
    return { url: checked(found.url, 'the stack output ApiUrl'), source: 'stack' };
  if (options.stack) {
    throw new EndpointError(`cannot read the ApiUrl of stack ${options.stack}: ${found.reason}`);
  }
  return { url: LOCAL_ENDPOINT, source: 'local' };
}

function checked(url: string, from: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EndpointError(`${from} is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new EndpointError(`${from} must be an http or https URL: ${url}`);
  }
  return url.replace(/\/+$/, '');
}
