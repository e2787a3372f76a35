import { describe, expect, it } from 'vitest';
import { createHttpApi, type HttpApiOptions, Receipts } from '../../../lib/api/index.ts';
import { type SignedCertificate, verifyCertificate } from '../../../lib/core/index.ts';
import { apiEvent } from '../../helpers/events.ts';
import { aDeletion, DELETION_ID } from '../../helpers/records.ts';
import { localSigner } from '../../helpers/signer.ts';

const unused = async (): Promise<never> => {
  throw new Error('not reached by the certificate routes');
};

/** The api with a deletion in `state`, a signer, and one older key kept in the table. */
function apiWith(deletion = aDeletion()) {
  const signer = localSigner();
  const old = localSigner('arn:aws:kms:eu-west-1:000000000000:key/old');
  const receipts = new Receipts({
    deletions: { get: async () => deletion },
    chains: { totals: async () => ({ objectsDeleted: 0, bytesDeleted: 0, failedObjects: 0 }) },
    failures: { list: async () => [] },
    uploads: { count: async () => 0 },
  });
  const options: HttpApiOptions = {
    streams: {
      create: unused,
      get: unused,
      list: unused,
      admitIngest: unused,
      releaseIngest: unused,
      abandonIngest: unused,
      refusal: () => {
        throw new Error('not reached by the certificate routes');
      },
      setRetention: unused,
    },
    deletions: {
      request: unused,
      retry: unused,
      cancel: unused,
      expedite: unused,
      requestPartitions: unused,
    },
    index: { list: unused },
    receipts,
    writer: { write: unused },
    maxEventsBytes: 1024,
    defaultGraceSeconds: 0,
    plans: { request: unused, get: unused, totals: unused },
    offboardings: { request: unused, get: unused, cancel: unused },
    offboarder: { view: unused, refresh: unused },
    pageSize: 1000,
    workerConcurrency: 20,
    signer,
    keys: { get: async (keyId) => (keyId === old.key.keyId ? old.key : undefined) },
  };
  const api = createHttpApi(options);
  const get = async (resource: string, pathParameters = {}, query = {}) => {
    const { response } = await api(apiEvent({ method: 'GET', resource, pathParameters, query }));
    return { status: response.statusCode, body: JSON.parse(response.body) };
  };
  return { get, signer, old };
}

const certificatePath = '/v1/tenants/{tenant}/deletions/{deletionId}/certificate';
const ids = { tenant: 'acme', deletionId: DELETION_ID };

describe('GET certificate', () => {
  it('answers a COMPLETED deletion with a certificate the published key verifies', async () => {
    // Arrange
    const { get } = apiWith(
      aDeletion({
        state: 'COMPLETED',
        objectsDeleted: 7,
        bytesDeleted: 70,
        completedAt: '2026-03-01T11:05:00.000Z',
        verifiedAt: '2026-03-01T11:05:00.000Z',
      }),
    );

    // Act
    const certificate = await get(certificatePath, ids);
    const key = await get('/v1/certificate-key');

    // Assess
    expect(certificate.status).toBe(200);
    const signed = certificate.body as SignedCertificate;
    expect(signed.certificate).toMatchObject({ deletionId: DELETION_ID, objectsDeleted: 7 });
    expect(signed.keyId).toBe(key.body.keyId);
    expect(verifyCertificate(signed, key.body.publicKeyPem)).toBe(true);
  });

  it('answers 409 DeletionNotCompleted while the deletion runs', async () => {
    const { get } = apiWith(aDeletion({ state: 'RUNNING' }));
    const answer = await get(certificatePath, ids);
    expect(answer).toMatchObject({
      status: 409,
      body: { error: { code: 'DeletionNotCompleted' } },
    });
  });
});

describe('GET /v1/certificate-key', () => {
  it('gives a replaced key by its id, so old certificates keep verifying', async () => {
    const { get, old } = apiWith();
    const answer = await get('/v1/certificate-key', {}, { keyId: old.key.keyId });
    expect(answer).toEqual({ status: 200, body: old.key });
  });

  it('answers 404 CertificateKeyNotFound for a key that never signed', async () => {
    const { get } = apiWith();
    const answer = await get('/v1/certificate-key', {}, { keyId: 'arn:aws:kms:x:1:key/none' });
    expect(answer).toMatchObject({
      status: 404,
      body: { error: { code: 'CertificateKeyNotFound' } },
    });
  });

  it('answers 400 InvalidKeyId for an empty keyId, as the document says (minLength 1)', async () => {
    const { get } = apiWith();
    const answer = await get('/v1/certificate-key', {}, { keyId: '' });
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'InvalidKeyId' } } });
  });
});
