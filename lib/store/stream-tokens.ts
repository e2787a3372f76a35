import { BadRequestError, isValidName } from '../core/index.ts';
import { keys } from './layout.ts';

/** The `nextToken` of a page of a tenant's streams: the last key read, checked on the way back. */
export const encodeToken = (key: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(key)).toString('base64url');

export function decodeToken(tenant: string, token: string): Record<string, string> {
  const invalid = () => new BadRequestError('InvalidNextToken', 'nextToken is not valid');
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { pk, sk } = (key ?? {}) as Record<string, unknown>;
  const expected = keys.streamsOf(tenant);
  if (typeof pk !== 'string' || typeof sk !== 'string' || pk !== expected.pk) throw invalid();
  const name = sk.slice(expected.skPrefix.length);
  if (
    !sk.startsWith(expected.skPrefix) ||
    !isValidName(name) ||
    Object.keys(key as object).length !== 2
  ) {
    throw invalid();
  }
  return { pk, sk };
}
