import { generateKeyPairSync, sign } from 'node:crypto';
import {
  GetPublicKeyCommand,
  KMSClient,
  SignCommand,
  type SigningAlgorithmSpec,
} from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type CertificateKey,
  certificateBytes,
  certificateOf,
  toReceipt,
  verifyCertificate,
} from '../../../lib/core/index.ts';
import { CertificateSigner } from '../../../lib/kms/index.ts';
import { aDeletion } from '../../helpers/records.ts';

const KEY_ARN = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const kms = mockClient(KMSClient);
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const certificate = certificateOf(
  toReceipt(aDeletion({ state: 'COMPLETED', completedAt: '2026-03-01T11:05:00.000Z' })),
);

/** KMS as documented: GetPublicKey answers DER SPKI, Sign a DER ECDSA signature of the message. */
function kmsWithKey(algorithms: SigningAlgorithmSpec[] = ['ECDSA_SHA_256']) {
  kms.on(GetPublicKeyCommand).resolves({
    KeyId: KEY_ARN,
    PublicKey: publicKey.export({ format: 'der', type: 'spki' }),
    SigningAlgorithms: algorithms,
    KeySpec: 'ECC_NIST_P256',
    KeyUsage: 'SIGN_VERIFY',
  });
  kms.on(SignCommand).callsFake((input) => ({
    KeyId: KEY_ARN,
    Signature: sign('sha256', Buffer.from(input.Message), privateKey),
    SigningAlgorithm: input.SigningAlgorithm,
  }));
}

describe('CertificateSigner', () => {
  beforeEach(() => kms.reset());

  it('signs the canonical bytes with ECDSA_SHA_256 as a RAW message, verifiable with the public key', async () => {
    // Arrange
    kmsWithKey();
    const remembered: CertificateKey[] = [];
    const signer = new CertificateSigner({
      client: new KMSClient({ region: 'eu-west-1' }),
      keyId: 'alias/lethe-certificates',
      remember: async (key) => {
        remembered.push(key);
      },
    });

    // Act
    const signed = await signer.sign(certificate);

    // Assess
    const [call] = kms.commandCalls(SignCommand);
    expect(call?.args[0].input).toMatchObject({
      KeyId: KEY_ARN,
      MessageType: 'RAW',
      SigningAlgorithm: 'ECDSA_SHA_256',
    });
    expect(Buffer.from(call?.args[0].input.Message ?? [])).toEqual(certificateBytes(certificate));
    expect(signed.keyId).toBe(KEY_ARN);
    expect(remembered).toEqual([
      {
        keyId: KEY_ARN,
        algorithm: 'ECDSA_SHA_256',
        publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      },
    ]);
    expect(verifyCertificate(signed, remembered[0]?.publicKeyPem ?? '')).toBe(true);
  });

  it('asks KMS for the public key once, and remembers it before the first signature', async () => {
    // Arrange
    kmsWithKey();
    const order: string[] = [];
    const remember = vi.fn(async () => {
      order.push('remember');
    });
    kms.on(SignCommand).callsFake((input) => {
      order.push('sign');
      return { Signature: sign('sha256', Buffer.from(input.Message), privateKey) };
    });
    const signer = new CertificateSigner({ client: new KMSClient({}), keyId: KEY_ARN, remember });

    // Act
    await Promise.all([signer.sign(certificate), signer.sign(certificate), signer.currentKey()]);

    // Assess
    expect(kms.commandCalls(GetPublicKeyCommand)).toHaveLength(1);
    expect(remember).toHaveBeenCalledTimes(1);
    expect(order).toEqual(['remember', 'sign', 'sign']);
  });

  it('signs nothing when the key cannot be remembered, and tries again on the next call', async () => {
    // Arrange
    kmsWithKey();
    const remember = vi
      .fn<(key: CertificateKey) => Promise<void>>()
      .mockRejectedValueOnce(new Error('table unavailable'))
      .mockResolvedValue(undefined);
    const signer = new CertificateSigner({ client: new KMSClient({}), keyId: KEY_ARN, remember });

    // Act + Assess
    await expect(signer.sign(certificate)).rejects.toThrow('table unavailable');
    expect(kms.commandCalls(SignCommand)).toHaveLength(0);
    await expect(signer.sign(certificate)).resolves.toMatchObject({ keyId: KEY_ARN });
  });

  it('refuses a key that cannot sign with ECDSA_SHA_256', async () => {
    kmsWithKey(['RSASSA_PSS_SHA_256']);
    const signer = new CertificateSigner({
      client: new KMSClient({}),
      keyId: KEY_ARN,
      remember: async () => {},
    });
    await expect(signer.sign(certificate)).rejects.toThrow(/cannot sign with ECDSA_SHA_256/);
  });
});
