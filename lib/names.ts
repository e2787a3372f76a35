import { InvalidNameError } from './errors.ts';

/** Tenant and stream names: lowercase, 1 to 63 characters, no separators. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const isValidName = (value: unknown): value is string =>
  typeof value === 'string' && NAME_PATTERN.test(value);

export function assertValidName(kind: 'tenant' | 'stream', value: unknown): string {
  if (!isValidName(value)) {
    throw new InvalidNameError(
      `${kind} name must match ${NAME_PATTERN.source} (got ${JSON.stringify(value ?? null)})`,
    );
  }
  return value;
}

/**
 * The key prefix of one stream incarnation. It always ends in `/`, and names cannot hold `/`,
 * so `logs/1/` is never a prefix of `logs2/1/` or of `logs/10/`.
 */
export function streamPrefix(root: string, tenant: string, stream: string, generation: number) {
  return `${root}/${tenant}/${stream}/${generation}/`;
}

export const s3Uri = (bucket: string, key: string) => `s3://${bucket}/${key}`;

/** True when `key` lies strictly inside `prefix` (which ends in `/`). */
export const isInside = (key: string, prefix: string) =>
  prefix.endsWith('/') && key.length > prefix.length && key.startsWith(prefix);
