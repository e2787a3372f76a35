// lib/kms: the KMS adapter. Certificates signed by an asymmetric key that never leaves KMS.
export { CertificateSigner, type CertificateSignerOptions } from './certificate-signer.ts';
