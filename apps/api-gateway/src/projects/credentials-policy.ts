import { embeddingNotConfigured, invalidRequest, llmNotConfigured } from '@ask/ask-errors';
import { CredentialSchemaError, missingCloudCredential, parseServiceAccountJson } from '@ask/llm-providers';
import type { ProviderCredentials } from '@ask/llm-providers';
import type { Project } from '@ask/persistence';
import type { ProjectSettingsDto } from './project.dto';

/**
 * Save-time schema of the credentials in a body: `gcpServiceAccountJson` must be a plain
 * service-account key (`parseServiceAccountJson`); every other field is an opaque secret (a string,
 * lengths bounded by the DTO) that only ever goes into a header or a signature.
 * @throws AskError 400 `invalid_request` naming the field (`credentials.gcpServiceAccountJson.type`…);
 *   nothing is stored then.
 */
export function assertCredentialsAccepted(body: ProjectSettingsDto): void {
  const json = body.credentials?.gcpServiceAccountJson;
  if (json === undefined) return;
  try {
    parseServiceAccountJson(json);
  } catch (err) {
    if (err instanceof CredentialSchemaError) throw invalidRequest(err.message);
    throw err;
  }
}

/**
 * Save-time check that a Vertex or Bedrock block has the credentials it needs, as the project would
 * be after the write: the body's credentials, else the stored ones unless this write drops them
 * (`credentialsAfter`: null for none, undefined when stored ones cannot be read here). Skipped when
 * the operator lets the project use ambient credentials (`ambient`), when the write touches neither
 * the providers nor the credentials, and when the stored credentials cannot be read.
 * @throws AskError 412 `llm_not_configured` / `embedding_not_configured` naming the missing field.
 */
export async function assertCloudCredentialsPresent(
  body: ProjectSettingsDto,
  stored: Project | null,
  ambient: boolean,
  credentialsAfter: () => Promise<ProviderCredentials | null | undefined>,
): Promise<void> {
  if (ambient) return;
  if (body.llm === undefined && body.embedding === undefined && body.credentials === undefined) return;
  const llm = body.llm === undefined ? stored?.llmSettings : body.llm;
  const embedding = body.embedding === undefined ? stored?.embeddingSettings : body.embedding;
  const needs =
    llm?.provider === 'vertex' ||
    llm?.provider === 'bedrock' ||
    embedding?.provider === 'vertex' ||
    embedding?.provider === 'bedrock';
  if (!needs) return;
  const after = await credentialsAfter();
  // Stored credentials this process cannot read: the ask-time check (same rule) still holds.
  if (after === undefined) return;
  const credentials = after ?? {};
  const forLlm = llm ? missingCloudCredential(llm.provider, credentials) : undefined;
  if (forLlm) throw llmNotConfigured(`provider=${llm?.provider}: ${forLlm}`);
  const forEmbedding = embedding ? missingCloudCredential(embedding.provider, credentials) : undefined;
  if (forEmbedding) throw embeddingNotConfigured(`embedding provider=${embedding?.provider}: ${forEmbedding}`);
}
