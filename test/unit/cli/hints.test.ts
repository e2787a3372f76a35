import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../lib/cli/client.ts';
import {
  deletionIdOf,
  describePosition,
  looksLikeNdjson,
  positionOf,
  tenantHints,
} from '../../../lib/cli/hints.ts';
import { DELETION_ID } from '../../helpers/records.ts';

describe('NDJSON', () => {
  it.each(['{"a":1}\n{"a":2}\n', '{"a":1}\r\n\r\n{"a":2}', '1\n"two"\n[3]'])(
    'is recognised in %j',
    (text) => {
      expect(looksLikeNdjson(text)).toBe(true);
    },
  );

  it.each(['{"a":1}', '[{"a":1},\n{"a":2}]', '{"a":1}\n{"a":', '', 'hello\nworld'])(
    'is not seen in %j',
    (text) => {
      expect(looksLikeNdjson(text)).toBe(false);
    },
  );
});

describe('a position in a body', () => {
  it('is given as line and column', () => {
    expect(describePosition('{"a":1}\n{"a":2}', 8)).toBe('position 8 (line 2, column 1)');
    expect(describePosition('[1,,2]', 4)).toBe('position 4 (line 1, column 5)');
  });

  it('is read from the error details, or from the message', () => {
    const error = (message: string, details: Record<string, unknown> = {}) =>
      new ApiError(400, 'InvalidJson', message, '', details);

    expect(positionOf(error('the body is not valid JSON', { position: 12 }))).toBe(12);
    expect(positionOf(error('Unexpected token at position 7'))).toBe(7);
    expect(positionOf(error('the body is not valid JSON'))).toBeUndefined();
    expect(positionOf(error('the body is not valid JSON', { position: 'x' }))).toBeUndefined();
  });
});

describe('the deletion a 409 is about', () => {
  it('is the deletionId of the error details first, then one named in the message', () => {
    const conflict = (message: string, details: Record<string, unknown> = {}) =>
      new ApiError(409, 'StreamDeleting', message, '', details);

    expect(deletionIdOf(conflict('being deleted', { deletionId: 'abc' }))).toBe('abc');
    expect(deletionIdOf(conflict(`being deleted (deletion ${DELETION_ID}); retry`))).toBe(
      DELETION_ID,
    );
    expect(deletionIdOf(conflict('being deleted; retry'))).toBeUndefined();
  });
});

describe('the hints of an offboarding', () => {
  const refusal = (status: number, code: string) => new ApiError(status, code, 'refused', '');

  it('point a stream created under a tenant being offboarded at the offboarding', () => {
    expect(tenantHints(refusal(409, 'TenantDeleting'), 'acme')).toEqual([
      'hint: the tenant is being offboarded: lethe tenants get acme',
    ]);
  });

  it('say how to follow an offboarding too late to cancel', () => {
    expect(tenantHints(refusal(409, 'OffboardingNotCancellable'), 'acme')).toEqual([
      'follow it: lethe tenants get acme',
    ]);
  });

  it('are none for other refusals, or without a tenant', () => {
    expect(tenantHints(refusal(409, 'StreamDeleting'), 'acme')).toEqual([]);
    expect(tenantHints(refusal(409, 'TenantDeleting'), undefined)).toEqual([]);
  });
});
