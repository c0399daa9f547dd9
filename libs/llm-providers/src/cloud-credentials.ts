import type { ProviderCredentials } from './types';

/**
 * What a Vertex or Bedrock project lacks to call its provider with its OWN identity, in the words of
 * the typed 412 (`credentials.awsAccessKeyId and credentials.awsSecretAccessKey are not set …`);
 * undefined when it has it, or for any other provider. Used at save (the gateway) and when an adapter
 * is built (every process), unless the operator enabled ambient credentials for the project.
 */
export function missingCloudCredential(provider: string, credentials: ProviderCredentials): string | undefined {
  if (provider === 'vertex' && !credentials.gcpServiceAccountJson && !credentials.gcpAccessToken)
    return 'credentials.gcpServiceAccountJson or credentials.gcpAccessToken is not set (ambient Google credentials are off for this project)';
  if (provider === 'bedrock' && !(credentials.awsAccessKeyId && credentials.awsSecretAccessKey))
    return 'credentials.awsAccessKeyId and credentials.awsSecretAccessKey are not set (ambient AWS credentials are off for this project)';
  return undefined;
}
