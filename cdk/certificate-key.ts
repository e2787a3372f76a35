import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AccountRootPrincipal,
  type IGrantable,
  PolicyDocument,
  PolicyStatement,
} from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface CertificateKeyProps {
  /**
   * Which key signs: raise it to replace the key (a new KMS key; the old one is kept, and so is
   * its public key in the table, so every certificate it signed keeps verifying). @default 1
   */
  readonly version?: number;
}

/** What `grantSign` allows: sign, and read the public half the table keeps. */
export const SIGN_ACTIONS = ['kms:Sign', 'kms:GetPublicKey'] as const;

/**
 * What the account (its IAM principals, as their IAM policies allow) may do with the key: run
 * it, with nothing that signs or creates a grant (which could allow signing). KMS refuses a key
 * policy that would lock the account out, so `kms:PutKeyPolicy` stays. No `kms:GetPublicKey`:
 * the table keeps each public key and the API serves it.
 */
export const ADMIN_ACTIONS = [
  // CDK's key administrator actions, less kms:Create* (CreateGrant), kms:Get* (GetPublicKey)
  // and kms:GenerateDataKey.
  'kms:CreateAlias',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
] as const;

/**
 * The asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY) that signs deletion certificates. Its
 * private half never leaves KMS; asymmetric keys do not rotate by themselves, so a replacement
 * is a new key (`version`), and a replaced key is retained, never deleted with the stack.
 * Its policy lets only the role given `grantSign` sign: not KMS's default (the account `kms:*`),
 * under which any principal of the account with an IAM `kms:Sign` could forge a certificate.
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
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministers',
            principals: [new AccountRootPrincipal()],
            actions: [...ADMIN_ACTIONS],
            resources: ['*'],
          }),
        ],
      }),
    });
  }

  /**
   * Sign with the key and read its public half: nothing else (no decrypt, no admin). Named in
   * the key's policy as well as granted in the role's, since the account is not trusted to sign.
   */
  grantSign(grantee: IGrantable) {
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'SignCertificates',
        principals: [grantee.grantPrincipal],
        actions: [...SIGN_ACTIONS],
        resources: ['*'],
      }),
    );
    return this.key.grant(grantee, ...SIGN_ACTIONS);
  }
}
