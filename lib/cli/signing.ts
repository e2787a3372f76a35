import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Signer } from './client.ts';

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export type CredentialsProvider = () => Promise<Credentials>;

/** The local stack serves on loopback without auth; anything else is API Gateway with IAM auth. */
export function needsSigning(endpoint: URL): boolean {
  const host = endpoint.hostname.replace(/^\[(.*)\]$/, '$1');
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return !loopback;
}

/** The region in an `execute-api` host name (`{api}.execute-api.{region}.amazonaws.com`). */
export function regionOfHost(endpoint: URL): string | undefined {
  return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(endpoint.hostname)?.[1];
}

export interface SignerOptions {
  readonly region: string;
  readonly credentials: CredentialsProvider;
  /** @default 'execute-api' */
  readonly service?: string;
  readonly now?: () => Date;
}

/** SigV4 for API Gateway: the signature covers method, path, query, host and body hash. */
export function createSigner(options: SignerOptions): Signer {
  const signer = new SignatureV4({
    service: options.service ?? 'execute-api',
    region: options.region,
    credentials: options.credentials,
    sha256: Sha256,
    // API Gateway does not want x-amz-content-sha256; the payload hash is signed all the same.
    applyChecksum: false,
  });
  const now = options.now ?? (() => new Date());
  return async ({ method, url, headers, body }) => {
    const names = new Set(url.searchParams.keys());
    const query = Object.fromEntries(
      [...names].map((name) => [name, url.searchParams.getAll(name)]),
    );
    const signed = await signer.sign(
      {
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        path: url.pathname,
        query,
        headers: { ...headers, host: url.host },
        ...(body ? { body } : {}),
        ...(url.port ? { port: Number(url.port) } : {}),
      },
      { signingDate: now() },
    );
    return signed.headers;
  };
}
