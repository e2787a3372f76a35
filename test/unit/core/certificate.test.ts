import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Certificate,
  certificateBytes,
  certificateOf,
  DeletionNotCompletedError,
  publicKeyPem,
  toReceipt,
  VERIFIED_CLAIM,
  verifyCertificate,
} from '../../../lib/core/index.ts';
import { aDeletion } from '../../helpers/records.ts';
import { localSigner } from '../../helpers/signer.ts';

const completed = toReceipt(
  aDeletion({
    state: 'COMPLETED',
    objectsDeleted: 1200,
    bytesDeleted: 98_765,
    multipartUploadsAborted: 2,
    completedAt: '2026-03-01T11:05:00.000Z',
    verifiedAt: '2026-03-01T11:04:59.000Z',
  }),
);

describe('certificateOf', () => {
  it('states the identity, the exact counts, the times and what was verified', () => {
    // Act
    const certificate = certificateOf(completed);

    // Assess
    expect(certificate).toEqual({
      version: 1,
      deletionId: completed.deletionId,
      tenant: 'acme',
      stream: 'logs',
      generation: 1,
      location: completed.location,
      objectsDeleted: 1200,
      bytesDeleted: 98_765,
      multipartUploadsAborted: 2,
      requestedAt: '2026-03-01T11:00:00.000Z',
      executeAfter: '2026-03-01T11:00:00.000Z',
      completedAt: '2026-03-01T11:05:00.000Z',
      verifiedAt: '2026-03-01T11:04:59.000Z',
      verified: expect.stringContaining('multipart upload'),
    });
  });

  it('claims a partition deletion verified its partitions only, and names its cutoff', () => {
    // Arrange
    const partitions = toReceipt(
      aDeletion({
        state: 'COMPLETED',
        before: '2026-02-01',
        completedAt: '2026-03-01T11:05:00.000Z',
      }),
    );

    // Act
    const certificate = certificateOf(partitions);

    // Assess
    expect(certificate.partitionsBefore).toBe('2026-02-01');
    expect(certificate.verified).toBe(
      'a listing of every object, version, delete marker and multipart upload in progress in the dt= partitions of days before 2026-02-01 under location returned nothing',
    );
    expect(certificateOf(completed).verified).toBe(VERIFIED_CLAIM);
    expect(certificateOf(completed)).not.toHaveProperty('partitionsBefore');
  });

  it.each(['SCHEDULED', 'PENDING', 'RUNNING', 'FAILED', 'CANCELLED'] as const)(
    'refuses a %s deletion with DeletionNotCompleted (409)',
    (state) => {
      // Act
      const attempt = () => certificateOf(toReceipt(aDeletion({ state })));

      // Assess
      expect(attempt).toThrow(DeletionNotCompletedError);
      expect(attempt).toThrow(new RegExp(`is ${state}`));
    },
  );
});

describe('verifyCertificate', () => {
  const signer = localSigner();
  const signed = async () => signer.sign(certificateOf(completed));

  it('accepts a certificate as signed, whatever the order of its keys in the file', async () => {
    // Arrange: a file written by another tool, keys reversed
    const original = await signed();
    const reordered = JSON.parse(
      JSON.stringify(Object.fromEntries(Object.entries(original.certificate).reverse())),
    );

    // Act + Assess
    expect(verifyCertificate(original, signer.key.publicKeyPem)).toBe(true);
    expect(
      verifyCertificate({ ...original, certificate: reordered }, signer.key.publicKeyPem),
    ).toBe(true);
  });

  it('rejects a certificate with any one field changed', async () => {
    const original = await signed();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(original.certificate) as Array<keyof Certificate>)),
        fc.oneof(fc.string(), fc.integer()),
        async (field, value) => {
          fc.pre(original.certificate[field] !== value);
          const tampered = {
            ...original,
            certificate: { ...original.certificate, [field]: value },
          };
          expect(verifyCertificate(tampered, signer.key.publicKeyPem)).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rejects a flipped byte of the signature, and a field added to the certificate', async () => {
    const original = await signed();
    const bytes = Buffer.from(original.signature, 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    const flipped = { ...original, signature: bytes.toString('base64') };
    const extended = { ...original, certificate: { ...original.certificate, note: 'x' } };

    expect(verifyCertificate(flipped, signer.key.publicKeyPem)).toBe(false);
    expect(verifyCertificate(extended, signer.key.publicKeyPem)).toBe(false);
  });

  it('rejects a certificate checked against another key', async () => {
    const other = localSigner();
    expect(verifyCertificate(await signed(), other.key.publicKeyPem)).toBe(false);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['an array', []],
    ['no signature', { certificate: {}, algorithm: 'ECDSA_SHA_256' }],
    ['a signature not in base64', { certificate: {}, signature: '!!', algorithm: 'ECDSA_SHA_256' }],
    ['another algorithm', { certificate: {}, signature: 'AAAA', algorithm: 'RSASSA_PSS_SHA_256' }],
  ])('is false, not an exception, for %s', (_, value) => {
    expect(verifyCertificate(value, signer.key.publicKeyPem)).toBe(false);
  });

  it('signs the canonical bytes: sorted keys, no whitespace', () => {
    expect(certificateBytes({ b: 1, a: 'x' }).toString()).toBe('{"a":"x","b":1}');
  });

  it('turns the DER public key KMS returns into PEM', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = publicKey.export({ format: 'der', type: 'spki' });
    const pem = publicKeyPem(der);
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(pem).toBe(publicKey.export({ format: 'pem', type: 'spki' }).toString());
  });
});
