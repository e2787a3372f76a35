import { createHash } from 'node:crypto';
import { InvalidNameError } from './errors.ts';

/** Tenant and stream names: lowercase, 1 to 63 characters, no separators. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Deletion ids are lowercase UUIDs (what `randomUUID` makes). */
export const DELETION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Chain ids: the first 20 hex digits of the digest of the chain's prefix. */
export const CHAIN_ID_PATTERN = /^[0-9a-f]{20}$/;

export const isValidName = (value: unknown): value is string =>
  typeof value === 'string' && NAME_PATTERN.test(value);

export const isDeletionId = (value: unknown): value is string =>
  typeof value === 'string' && DELETION_ID_PATTERN.test(value);

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

/** A chain's id is a digest of its prefix: the same listing always yields the same chains. */
export const chainIdOf = (prefix: string) =>
  createHash('sha256').update(prefix).digest('hex').slice(0, 20);
