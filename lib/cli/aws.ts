import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import type { StackLookup } from './endpoint.ts';
import type { CredentialsProvider } from './signing.ts';

/** The SDK's default credential chain: environment, profiles, SSO, web identity, containers... */
export const defaultCredentials = (): CredentialsProvider => fromNodeProviderChain();

/** The region of the SDK's configuration chain (AWS_REGION, then the profile's `region`). */
export async function configuredRegion(region?: string): Promise<string | undefined> {
  try {
    return await new CloudFormationClient(region ? { region } : {}).config.region();
  } catch {
    return undefined;
  }
}

/** Reads the `ApiUrl` output of a deployed Lethe stack, if there are credentials to ask with. */
export function cloudFormationLookup(options: {
  readonly region?: string | undefined;
  readonly credentials?: CredentialsProvider;
  readonly timeoutMs?: number;
}): StackLookup {
  return async (stackName) => {
    const credentials = options.credentials ?? defaultCredentials();
    try {
      await credentials();
    } catch (error) {
      return { reason: `no AWS credentials (${messageOf(error)})` };
    }
    const client = new CloudFormationClient({
      credentials,
      maxAttempts: 1,
      ...(options.region ? { region: options.region } : {}),
    });
    try {
      const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }), {
        abortSignal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      });
      const url = Stacks?.[0]?.Outputs?.find(
        (output) => output.OutputKey === 'ApiUrl',
      )?.OutputValue;
      return url ? { url } : { reason: 'the stack has no ApiUrl output' };
    } catch (error) {
      return { reason: messageOf(error) };
    } finally {
      client.destroy();
    }
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
