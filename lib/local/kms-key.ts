import {
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  type KeySpec,
  type KeyUsageType,
  type KMSClient,
  NotFoundException,
} from '@aws-sdk/client-kms';

/** A KMS key of the template in the emulator: found by its alias from an earlier run, or created. */
export async function createKey(
  client: KMSClient,
  alias: string,
  spec: { KeySpec: KeySpec; KeyUsage: KeyUsageType },
): Promise<{ keyId: string; arn: string }> {
  try {
    const { KeyMetadata } = await client.send(new DescribeKeyCommand({ KeyId: alias }));
    if (KeyMetadata?.KeyId && KeyMetadata.Arn) {
      return { keyId: KeyMetadata.KeyId, arn: KeyMetadata.Arn };
    }
  } catch (error) {
    if (!(error instanceof NotFoundException)) throw error;
  }
  const { KeyMetadata } = await client.send(
    new CreateKeyCommand({
      ...spec,
      Description: `Lethe local: ${alias}`,
    }),
  );
  if (!KeyMetadata?.KeyId || !KeyMetadata.Arn)
    throw new Error(`CreateKey for ${alias} gave no key`);
  await client.send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: KeyMetadata.KeyId }));
  return { keyId: KeyMetadata.KeyId, arn: KeyMetadata.Arn };
}
