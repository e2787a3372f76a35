import {
  BadRequestError,
  type Certificate,
  type CertificateKey,
  CertificateKeyNotFoundError,
  certificateOf,
  type SignedCertificate,
} from '../core/index.ts';
import type { Receipts } from './receipts.ts';
import { deletionIdOf, type Operations, tenantOf } from './request.ts';

/** What signs certificates: a KMS key in the stack (see lib/kms), a local key in tests. */
export interface Signer {
  sign(certificate: Certificate): Promise<SignedCertificate>;
  currentKey(): Promise<CertificateKey>;
}

export interface CertificateOperationsOptions {
  readonly receipts: Pick<Receipts, 'get'>;
  readonly signer: Signer;
  /** Every public key that ever signed a certificate, by key id. */
  readonly keys: { get(keyId: string): Promise<CertificateKey | undefined> };
}

/** The proof routes: a COMPLETED deletion's signed certificate, and the keys that verify it. */
export function certificateOperations({ receipts, signer, keys }: CertificateOperationsOptions) {
  return {
    getCertificate: async (request) => {
      const receipt = await receipts.get(tenantOf(request), deletionIdOf(request));
      return {
        status: 200,
        body: await signer.sign(certificateOf(receipt)),
        subject: { stream: receipt.stream, generation: receipt.generation },
      };
    },

    getCertificateKey: async (request) => {
      const keyId = request.query.keyId;
      if (keyId === undefined) return { status: 200, body: await signer.currentKey() };
      if (keyId === '') {
        throw new BadRequestError(
          'InvalidKeyId',
          "keyId is empty: give a certificate's keyId, or leave it out for the key that signs now",
        );
      }
      const current = await signer.currentKey();
      const key = keyId === current.keyId ? current : await keys.get(keyId);
      if (!key) throw new CertificateKeyNotFoundError(keyId);
      return { status: 200, body: key };
    },
  } satisfies Operations<string>;
}
