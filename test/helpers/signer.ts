import { generateKeyPairSync, sign } from 'node:crypto';
import type { Signer } from '../../lib/api/index.ts';
import {
  CERTIFICATE_ALGORITHM,
  type Certificate,
  type CertificateKey,
  certificateBytes,
} from '../../lib/core/index.ts';

/**
 * A signer with a P-256 key of its own, signing as KMS does (DER ECDSA over SHA-256 of the
 * message): for tests that need real signatures without KMS.
 */
export function localSigner(keyId = 'arn:aws:kms:eu-west-1:000000000000:key/test-key'): Signer & {
  readonly key: CertificateKey;
} {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const key: CertificateKey = {
    keyId,
    algorithm: CERTIFICATE_ALGORITHM,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
  return {
    key,
    currentKey: async () => key,
    sign: async (certificate: Certificate) => ({
      certificate,
      signature: sign('sha256', certificateBytes(certificate), privateKey).toString('base64'),
      algorithm: CERTIFICATE_ALGORITHM,
      keyId,
    }),
  };
}
