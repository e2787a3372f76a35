import { GetPublicKeyCommand, type KMSClient, SignCommand } from '@aws-sdk/client-kms';
import {
  CERTIFICATE_ALGORITHM,
  type Certificate,
  type CertificateKey,
  certificateBytes,
  publicKeyPem,
  type SignedCertificate,
} from '../core/index.ts';

export interface CertificateSignerOptions {
  readonly client: KMSClient;
  /** The stack's signing key (ECC_NIST_P256, SIGN_VERIFY): id, ARN or alias. */
  readonly keyId: string;
  /** Told about the signing key before its first signature leaves, so it can be kept. */
  readonly remember: (key: CertificateKey) => Promise<void>;
}

/**
 * Signs certificates with a KMS asymmetric key: the private key never leaves KMS, and the
 * public key is remembered (through `remember`) before the first certificate it signs is
 * handed out, so that every certificate stays verifiable after the key is replaced.
 */
export class CertificateSigner {
  readonly #client: KMSClient;
  readonly #keyId: string;
  readonly #remember: CertificateSignerOptions['remember'];
  #current: Promise<CertificateKey> | undefined;

  constructor(options: CertificateSignerOptions) {
    this.#client = options.client;
    this.#keyId = options.keyId;
    this.#remember = options.remember;
  }

  /** The signing key's public half, as KMS gives it (read once per cold start). */
  currentKey(): Promise<CertificateKey> {
    this.#current ??= this.#fetchKey().catch((error: unknown) => {
      this.#current = undefined;
      throw error;
    });
    return this.#current;
  }

  async sign(certificate: Certificate): Promise<SignedCertificate> {
    const key = await this.currentKey();
    const { Signature } = await this.#client.send(
      new SignCommand({
        KeyId: key.keyId,
        Message: certificateBytes(certificate),
        MessageType: 'RAW',
        SigningAlgorithm: CERTIFICATE_ALGORITHM,
      }),
    );
    if (!Signature) throw new Error(`KMS returned no signature for key ${this.#keyId}`);
    return {
      certificate,
      signature: Buffer.from(Signature).toString('base64'),
      algorithm: CERTIFICATE_ALGORITHM,
      keyId: key.keyId,
    };
  }

  async #fetchKey(): Promise<CertificateKey> {
    const {
      KeyId,
      PublicKey,
      SigningAlgorithms = [],
    } = await this.#client.send(new GetPublicKeyCommand({ KeyId: this.#keyId }));
    if (!KeyId || !PublicKey) throw new Error(`KMS returned no public key for ${this.#keyId}`);
    if (!SigningAlgorithms.includes(CERTIFICATE_ALGORITHM)) {
      throw new Error(`KMS key ${KeyId} cannot sign with ${CERTIFICATE_ALGORITHM}`);
    }
    const key: CertificateKey = {
      keyId: KeyId,
      algorithm: CERTIFICATE_ALGORITHM,
      publicKeyPem: publicKeyPem(PublicKey),
    };
    await this.#remember(key);
    return key;
  }
}
