import { randomUUID } from 'node:crypto';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateKey,
  type SignedCertificate,
  verifyCertificate,
} from '../../lib/core/index.ts';
import { prepareCell, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Signed certificates end to end: the local stack creates the stack's KMS key (ECC_NIST_P256)
 * in the emulator, the api signs with it, and a certificate verifies offline with the public
 * key the API publishes, also after the key is replaced.
 */
describe('deletion certificates', () => {
  const namePrefix = `k${randomUUID().slice(0, 8)}`;
  let target: TestTarget;
  let api: ApiClient;
  let tenant: string;
  let deletionId: string;

  const certificate = (client: ApiClient) =>
    client.call<SignedCertificate>(
      'GET',
      `/v1/tenants/${tenant}/deletions/${deletionId}/certificate`,
    );
  const key = (client: ApiClient, keyId?: string) =>
    client.call<CertificateKey>(
      'GET',
      `/v1/certificate-key${keyId ? `?keyId=${encodeURIComponent(keyId)}` : ''}`,
    );

  beforeAll(async () => {
    target = await startTarget({ namePrefix });
    api = apiClient(target.baseUrl);
    tenant = `c${randomUUID().slice(0, 8)}`;
    await prepareCell(api, target.s3, tenant, 12);
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('answers 409 DeletionNotCompleted while the deletion waits out its window', async () => {
    // Arrange
    const scheduled = await api.delete(tenant, 'logs', '?graceSeconds=3600');
    deletionId = String(scheduled.body.deletionId);

    // Act
    const early = await certificate(api);

    // Assess
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ error: { code: 'DeletionNotCompleted' } });
  });

  it('signs a COMPLETED deletion with the stack key; the published key verifies it', async () => {
    // Arrange
    expect((await api.expedite(tenant, deletionId)).status).toBe(202);
    const receipt = await waitForEnd(api, tenant, deletionId);
    expect(receipt.state).toBe('COMPLETED');

    // Act
    const signed = await certificate(api);
    const published = await key(api);

    // Assess
    expect(signed.status).toBe(200);
    expect(signed.body.algorithm).toBe('ECDSA_SHA_256');
    expect(signed.body.certificate).toMatchObject({
      deletionId,
      tenant,
      stream: 'logs',
      objectsDeleted: receipt.objectsDeleted,
      bytesDeleted: receipt.bytesDeleted,
      completedAt: receipt.completedAt,
      verifiedAt: receipt.verifiedAt,
    });
    expect(published.body.keyId).toBe(signed.body.keyId);
    expect(published.body.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(verifyCertificate(signed.body, published.body.publicKeyPem)).toBe(true);
  });

  it('rejects the certificate with one byte changed', async () => {
    // Arrange
    const { body } = await certificate(api);
    const { body: published } = await key(api);
    const text = JSON.stringify(body);
    const count = String(body.certificate.objectsDeleted);
    const tampered = JSON.parse(
      text.replace(`"objectsDeleted":${count}`, `"objectsDeleted":${Number(count) + 1}`),
    );

    // Act + Assess
    expect(tampered.certificate.objectsDeleted).toBe(Number(count) + 1);
    expect(verifyCertificate(tampered, published.publicKeyPem)).toBe(false);
  });

  it('keeps verifying certificates of a replaced key', async () => {
    // Arrange: a certificate from the first key, then the stack restarted on a new key
    const { body: old } = await certificate(api);
    await target.stop();
    const kms = new KMSClient({});
    const { KeyMetadata } = await kms.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
    );
    target = await startTarget({
      namePrefix,
      settings: { LETHE_CERTIFICATE_KEY_ID: KeyMetadata?.Arn },
    });
    api = apiClient(target.baseUrl);

    // Act
    const renewed = await certificate(api);
    const current = await key(api);
    const replaced = await key(api, old.keyId);
    const unknown = await key(api, `${old.keyId}-never`);

    // Assess
    expect(current.body.keyId).not.toBe(old.keyId);
    expect(renewed.body.keyId).toBe(current.body.keyId);
    expect(verifyCertificate(renewed.body, current.body.publicKeyPem)).toBe(true);
    expect(replaced.status).toBe(200);
    expect(verifyCertificate(old, replaced.body.publicKeyPem)).toBe(true);
    expect(verifyCertificate(old, current.body.publicKeyPem)).toBe(false);
    expect(unknown).toMatchObject({
      status: 404,
      body: { error: { code: 'CertificateKeyNotFound' } },
    });
    expect(renewed.body.certificate).toEqual(old.certificate);
  });
});
