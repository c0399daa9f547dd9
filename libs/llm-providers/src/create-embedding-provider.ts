import { llmNotConfigured } from '@ask/ask-errors';
import OpenAI from 'openai';
import { azureOpenAiClient, bedrockClient, DEFAULT_BASE_URLS, type ProviderFactoryOptions } from './create-chat-provider';
import { BedrockEmbeddingProvider } from './embedding/bedrock-embedding.provider';
import { OllamaEmbeddingProvider } from './embedding/ollama-embedding.provider';
import { OpenAiEmbeddingProvider } from './embedding/openai-embedding.provider';
import { LocalEmbeddingProvider } from './local/local-embedding.provider';
import { LocalSemanticEmbeddingProvider } from './local/local-semantic-embedding.provider';
import { vertexHost, vertexLocationPath, vertexTokenSource } from './vertex/vertex-auth';
import { VertexEmbeddingProvider } from './vertex/vertex-embedding.provider';
import type { EmbeddingProvider, EmbeddingProviderId, EmbeddingSettings, ProviderCredentials } from './types';

function requireField<T>(value: T | undefined, provider: EmbeddingProviderId, what: string): T {
  if (value === undefined || value === null || value === '') {
    throw llmNotConfigured(`embedding provider=${provider}: ${what} is not set`);
  }
  return value;
}

/**
 * Builds the embedding adapter a project's embedding settings name. Every adapter checks each vector
 * against `settings.dimensions`, which is known before anything is stored.
 *
 * | provider | adapter |
 * | --- | --- |
 * | `openai` | `/v1/embeddings` (canonical or `baseUrl`), `dimensions` sent to text-embedding-3 models |
 * | `azure-foundry` | Azure OpenAI embeddings (deployment path with `apiVersion`, else v1) |
 * | `bedrock` | Titan Text Embeddings via InvokeModel |
 * | `vertex` | `:predict` on a text-embedding model, `outputDimensionality` = dimensions |
 * | `ollama` | `/api/embed` with `truncate: false` |
 * | `local` | the in-process lexical embedder |
 * | `local-semantic` | the in-process Universal Sentence Encoder lite (512 dimensions, English) |
 *
 * @throws AskError 412 `llm_not_configured` when a required field or credential is missing;
 *   RangeError from the local embedder for dimensions outside 8..16000, and from the semantic one
 *   for any length but 512.
 */
export function createEmbeddingProvider(
  settings: EmbeddingSettings,
  credentials: ProviderCredentials,
  options: ProviderFactoryOptions = {},
): EmbeddingProvider {
  const override = settings.provider === 'local-semantic' ? undefined : options.baseUrlOverrides?.[settings.provider];
  switch (settings.provider) {
    case 'openai': {
      const custom = settings.baseUrl !== undefined && settings.baseUrl !== '';
      const client = new OpenAI({
        baseURL: override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.openai,
        apiKey: custom ? (credentials.apiKey ?? 'no-key') : requireField(credentials.apiKey, 'openai', 'apiKey'),
        organization: null,
        project: null,
        fetch: options.fetch,
        maxRetries: 0,
        logLevel: 'off',
      });
      return new OpenAiEmbeddingProvider({ client, provider: 'openai', model: settings.model, dimensions: settings.dimensions });
    }
    case 'azure-foundry': {
      const endpoint = requireField(override ?? settings.baseUrl, 'azure-foundry', 'baseUrl (the resource endpoint)');
      const client = azureOpenAiClient(endpoint, requireField(credentials.apiKey, 'azure-foundry', 'apiKey'), settings.apiVersion, options.fetch);
      return new OpenAiEmbeddingProvider({ client, provider: 'azure-foundry', model: settings.model, dimensions: settings.dimensions });
    }
    case 'bedrock': {
      const region = requireField(settings.region, 'bedrock', 'region');
      const client = bedrockClient(region, override ?? settings.baseUrl, credentials);
      return new BedrockEmbeddingProvider({ client, model: settings.model, dimensions: settings.dimensions });
    }
    case 'vertex': {
      const project = requireField(settings.gcpProject, 'vertex', 'gcpProject');
      const region = settings.region ?? 'us-central1';
      return new VertexEmbeddingProvider({
        locationUrl: vertexLocationPath(override ?? settings.baseUrl ?? vertexHost(region), project, region),
        token: vertexTokenSource(credentials),
        model: settings.model,
        dimensions: settings.dimensions,
        fetch: options.fetch,
      });
    }
    case 'ollama':
      return new OllamaEmbeddingProvider({
        baseUrl: override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.ollama,
        model: settings.model,
        dimensions: settings.dimensions,
        apiKey: credentials.apiKey,
        fetch: options.fetch,
      });
    case 'local':
      return new LocalEmbeddingProvider({ dimensions: settings.dimensions });
    case 'local-semantic':
      return new LocalSemanticEmbeddingProvider({
        dimensions: settings.dimensions,
        allowOtherLanguages: settings.allowOtherLanguages,
      });
  }
}
