import { RemovalPolicy } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface CertificateKeyProps {
  /**
   * Which key signs: raise it to replace the key (a new KMS key; the old one is kept, and so is
   * its public key in the table, so every certificate it signed keeps verifying). @default 1
   */
  readonly version?: number;
}

/**
 * The asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY) that signs deletion certificates. Its
 * private half never leaves KMS; asymmetric keys do not rotate by themselves, so a replacement
 * is a new key (`version`), and a replaced key is retained, never deleted with the stack.
 */
export class CertificateKey extends Construct {
  public readonly key: Key;

  constructor(scope: Construct, id: string, props: CertificateKeyProps = {}) {
    super(scope, id);
    const version = props.version ?? 1;
    if (!Number.isInteger(version) || version < 1) {
      throw new Error(`certificateKeyVersion must be a whole number from 1 (got ${version})`);
    }
    // The logical id changes with the version: CloudFormation creates the new key and, with
    // RETAIN, leaves the old one in the account.
    this.key = new Key(this, version === 1 ? 'Key' : `KeyV${version}`, {
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      description: `Lethe: signs deletion certificates (version ${version})`,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** Sign with the key and read its public half: nothing else (no decrypt, no admin). */
  grantSign(grantee: IGrantable) {
    return this.key.grant(grantee, 'kms:Sign', 'kms:GetPublicKey');
  }
}
