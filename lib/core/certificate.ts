import { createPublicKey, verify } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';
import { DeletionNotCompletedError } from './errors.ts';
import type { DeletionReceipt } from './views.ts';

/** The only signing algorithm of certificates: ECDSA over P-256 with SHA-256 (KMS's name). */
export const CERTIFICATE_ALGORITHM = 'ECDSA_SHA_256';

/** What a COMPLETED deletion's verification established, in words a reader can check. */
export const VERIFIED_CLAIM = verifiedClaimOf();

/**
 * The claim of a deletion's verification: of the whole location, or with `before` (a partition
 * deletion's cutoff) of its `dt=` partitions of days before it, not more.
 */
function verifiedClaimOf(before?: string): string {
  const scope = before === undefined ? '' : ` in the dt= partitions of days before ${before}`;
  return `a listing of every object, version, delete marker and multipart upload in progress${scope} under location returned nothing`;
}

/**
 * The statement a certificate signs: which data was deleted, how much of it, when, and that
 * nothing of it was left. Every field comes from the receipt, so a certificate is the same
 * document however often it is asked for; only its signature (ECDSA is randomized) differs.
 */
export interface Certificate {
  /** The format of this document; bumped if its fields ever change meaning. */
  version: 1;
  deletionId: string;
  tenant: string;
  stream: string;
  generation: number;
  /**
   * `s3://bucket/prefix/`: everything under it was deleted, or, with `partitionsBefore`, its
   * `dt=` partitions of days before that one (the stream and its newer partitions stay).
   */
  location: string;
  /** A partition deletion's cutoff day (`YYYY-MM-DD`); absent for a whole stream's deletion. */
  partitionsBefore?: string;
  objectsDeleted: number;
  bytesDeleted: number;
  multipartUploadsAborted: number;
  requestedAt: string;
  executeAfter: string;
  completedAt: string;
  /** When the listing of `verified` last came back empty. */
  verifiedAt: string;
  /** What the verification listed and found empty: the location's, or its partitions'. */
  verified: string;
}

export interface SignedCertificate {
  certificate: Certificate;
  /** Base64 of the DER-encoded ECDSA signature over `certificateBytes(certificate)`. */
  signature: string;
  algorithm: typeof CERTIFICATE_ALGORITHM;
  /** The key that signed, as KMS names it (its ARN): `GET /v1/certificate-key?keyId=` gives it. */
  keyId: string;
}

export interface CertificateKey {
  keyId: string;
  algorithm: typeof CERTIFICATE_ALGORITHM;
  /** SubjectPublicKeyInfo, PEM-encoded. */
  publicKeyPem: string;
}

/** The certificate of a COMPLETED deletion; any other state has none. */
export function certificateOf(receipt: DeletionReceipt): Certificate {
  const { completedAt, verifiedAt } = receipt;
  if (receipt.state !== 'COMPLETED' || !completedAt) {
    throw new DeletionNotCompletedError(receipt.deletionId, receipt.state);
  }
  return {
    version: 1,
    deletionId: receipt.deletionId,
    tenant: receipt.tenant,
    stream: receipt.stream,
    generation: receipt.generation,
    location: receipt.location,
    ...(receipt.partitionsBefore ? { partitionsBefore: receipt.partitionsBefore } : {}),
    objectsDeleted: receipt.objectsDeleted,
    bytesDeleted: receipt.bytesDeleted,
    multipartUploadsAborted: receipt.multipartUploadsAborted,
    requestedAt: receipt.requestedAt,
    executeAfter: receipt.executeAfter,
    completedAt,
    // Deletions completed before verification was timed finished with it.
    verifiedAt: verifiedAt ?? completedAt,
    verified: verifiedClaimOf(receipt.partitionsBefore),
  };
}

/** The bytes a certificate's signature covers: its RFC 8785 canonical JSON, UTF-8. */
export function certificateBytes(certificate: unknown): Buffer {
  return Buffer.from(canonicalJson(certificate), 'utf8');
}

/** DER SubjectPublicKeyInfo (as KMS GetPublicKey answers it) as PEM. */
export function publicKeyPem(der: Uint8Array): string {
  return createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' })
    .export({ format: 'pem', type: 'spki' })
    .toString();
}

/**
 * Whether `signed` was signed by the private half of `publicKey` and not changed since: the
 * check `lethe verify` makes offline. Anything malformed is simply not valid.
 */
export function verifyCertificate(signed: unknown, publicKey: string): boolean {
  if (!isSignedShape(signed) || signed.algorithm !== CERTIFICATE_ALGORITHM) return false;
  try {
    return verify(
      'sha256',
      certificateBytes(signed.certificate),
      { key: publicKey, dsaEncoding: 'der' },
      Buffer.from(signed.signature, 'base64'),
    );
  } catch {
    return false;
  }
}

function isSignedShape(
  value: unknown,
): value is { certificate: object; signature: string; algorithm: string } {
  if (typeof value !== 'object' || value === null) return false;
  const { certificate, signature, algorithm } = value as Record<string, unknown>;
  return (
    typeof certificate === 'object' &&
    certificate !== null &&
    typeof signature === 'string' &&
    /^[A-Za-z0-9+/]+={0,2}$/.test(signature) &&
    typeof algorithm === 'string'
  );
}
