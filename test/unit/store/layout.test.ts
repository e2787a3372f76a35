import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keys, MAX_SORT_KEY_BYTES, PARTITIONS } from '../../../lib/store/layout.ts';

/**
 * An S3 key: up to 1,024 bytes of UTF-8. Left to its default size fast-check makes short ones
 * only, so long keys (too long for a sort key beside its prefix) are drawn on purpose too.
 */
const s3Key = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1024 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1024, size: 'max' }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1000, maxLength: 1024 }),
  )
  .filter((key) => Buffer.byteLength(key) <= 1024);

describe('sort keys that hold an S3 key', () => {
  it('fit a sort key and name one key, and one key only, whatever the key', () => {
    fc.assert(
      fc.property(s3Key, s3Key, fc.string({ maxLength: 400 }), (a, b, uploadId) => {
        for (const sk of [keys.failure('d', 3, a).sk, keys.upload('d', a, uploadId).sk]) {
          expect(Buffer.byteLength(sk)).toBeLessThanOrEqual(MAX_SORT_KEY_BYTES);
        }
        expect(keys.failure('d', 3, a).sk).toBe(keys.failure('d', 3, a).sk);
        expect(keys.failure('d', 3, a).sk === keys.failure('d', 3, b).sk).toBe(a === b);
        expect(keys.failure('d', 3, a).sk.startsWith('FAILURE#3#')).toBe(true);
      }),
    );
  });

  it('names a key too long to fit beside its prefix by its hash: two that differ at the end apart', () => {
    const long = 'k'.repeat(1023);

    const [a, b] = [`${long}a`, `${long}b`].map((key) => keys.failure('d', 3, key).sk);

    expect(a).toMatch(/^FAILURE#3#sha256:[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
  });

  it('keeps a key that fits as it is, readable in the table', () => {
    expect(keys.failure('d', 1, 'streams/a/b.json').sk).toBe('FAILURE#1#streams/a/b.json');
    expect(keys.upload('d', 'streams/a/b.json', 'u1').sk).toBe('UPLOAD#u1#streams/a/b.json');
  });
});

describe('partitions', () => {
  it('hold every item key: a new partition kind must be named, and granted, in PARTITIONS', () => {
    // Prepare: one key of each kind `keys` makes
    const id = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
    const made = Object.entries(keys).map(([kind, make]) => {
      const args: Record<string, unknown[]> = {
        stream: ['acme', 'logs'],
        streamsOf: ['acme'],
        deletion: ['acme', id],
        chain: [id, 1, 'c'],
        chainsOf: [id],
        failure: [id, 1, 'k'],
        listed: [{ tenant: 'acme', deletionId: id, requestedAt: '2026-01-01T00:00:00.000Z' }],
        upload: [id, 'k', 'u'],
        offboarding: ['acme'],
        offboardingLink: [id, 'logs'],
        offboardingCompleted: [id],
        offboardingLinksOf: [id],
        plan: [id],
        planChain: [id, 'c'],
        planChainsOf: [id],
        keyBudget: ['bucket'],
        certificateKey: ['key'],
        uploadsOf: [id],
        failuresOf: [id, 1],
        itemsOf: [id],
      };
      const key = (make as (...a: unknown[]) => { pk?: string; listPk?: string })(
        ...(args[kind] ?? []),
      );
      return { kind, pk: key.pk ?? key.listPk, known: kind in args };
    });
    const patterns = Object.values(PARTITIONS).map((p) => new RegExp(`^${p.replace('*', '.*')}$`));

    // Assess
    for (const { kind, pk, known } of made) {
      expect(known, `keys.${kind} is new: add its arguments here`).toBe(true);
      expect(
        patterns.some((pattern) => pattern.test(String(pk))),
        `keys.${kind}: ${pk}`,
      ).toBe(true);
    }
  });
});
