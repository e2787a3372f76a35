import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keys, MAX_SORT_KEY_BYTES } from '../../../lib/store/layout.ts';

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
