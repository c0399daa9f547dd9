import { AskErrorCode, embeddingNotConfigured, forbidden, isAskError } from '@ask/ask-errors';
import OpenAI from 'openai';
import {
  azureOpenAiClient,
  bedrockClient,
  DEFAULT_BASE_URLS,
  type EndpointField,
  type ProviderFactoryOptions,
  providerTransport,
} from './create-chat-provider';
import { VERTEX_TOKEN_FIELD } from './vertex/vertex-credentials';
import { findEgressRefusal } from './egress/egress-policy';
import { BedrockEmbeddingProvider } from './embedding/bedrock-embedding.provider';
import { OllamaEmbeddingProvider } from './embedding/ollama-embedding.provider';
import { OpenAiEmbeddingProvider } from './embedding/openai-embedding.provider';
import { LocalEmbeddingProvider } from './local/local-embedding.provider';
import { LocalSemanticEmbeddingProvider } from './local/local-semantic-embedding.provider';
import { vertexHost, vertexLocation, vertexLocationPath, vertexTokenSource } from './vertex/vertex-auth';
import { VertexEmbeddingProvider } from './vertex/vertex-embedding.provider';
import type { EmbeddingProvider, EmbeddingProviderId, EmbeddingSettings, ProviderCredentials } from './types';

function requireField<T>(value: T | undefined, provider: EmbeddingProviderId, what: string): T {
  if (value === undefined || value === null || value === '') {
    throw embeddingNotConfigured(`embedding provider=${provider}: ${what} is not set`);
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
 * Every adapter connects through `options.egress` (see `providerTransport`); a connection it refuses
 * (the endpoint resolved to an internal address, a redirect led to one) rejects `embed` with the typed
 * 403 `forbidden` naming `embedding.baseUrl`, wherever the call runs (gateway, worker, CLI).
 *
 * @throws AskError 412 `embedding_not_configured` when a required field or credential is missing (a
 *   Vertex or Bedrock project without stored credentials unless `options.ambientCredentials`); 403
 *   `forbidden` naming `embedding.baseUrl` when the endpoint is refused; RangeError from the local
 *   embedder for dimensions outside 8..16000, and from the semantic one for any length but 512.
 */
export function createEmbeddingProvider(
  settings: EmbeddingSettings,
  credentials: ProviderCredentials,
  options: ProviderFactoryOptions = {},
): EmbeddingProvider {
  const override = settings.provider === 'local-semantic' ? undefined : options.baseUrlOverrides?.[settings.provider];
  const field: EndpointField = 'embedding.baseUrl';
  switch (settings.provider) {
    case 'openai': {
      const custom = settings.baseUrl !== undefined && settings.baseUrl !== '';
      const baseURL = override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.openai;
      const client = new OpenAI({
        baseURL,
        apiKey: custom ? (credentials.apiKey ?? 'no-key') : requireField(credentials.apiKey, 'openai', 'apiKey'),
        organization: null,
        project: null,
        fetch: providerTransport(options, field, baseURL).fetch,
        maxRetries: 0,
        logLevel: 'off',
      });
      return refusalsTyped(
        new OpenAiEmbeddingProvider({
          client,
          provider: 'openai',
          model: settings.model,
          dimensions: settings.dimensions,
        }),
      );
    }
    case 'azure-foundry': {
      const endpoint = requireField(override ?? settings.baseUrl, 'azure-foundry', 'baseUrl (the resource endpoint)');
      const apiKey = requireField(credentials.apiKey, 'azure-foundry', 'apiKey');
      const client = azureOpenAiClient(
        endpoint,
        apiKey,
        settings.apiVersion,
        providerTransport(options, field, endpoint).fetch,
      );
      return refusalsTyped(
        new OpenAiEmbeddingProvider({
          client,
          provider: 'azure-foundry',
          model: settings.model,
          dimensions: settings.dimensions,
        }),
      );
    }
    case 'bedrock':
      // The credential check is the chat adapter's: its 412 is re-coded here.
      return asEmbeddingRefusal(() => {
        const region = requireField(settings.region, 'bedrock', 'region');
        const endpoint = override ?? settings.baseUrl;
        const { policy } = providerTransport(options, field, endpoint);
        const client = bedrockClient(region, endpoint, credentials, { policy, field }, options.ambientCredentials);
        return refusalsTyped(
          new BedrockEmbeddingProvider({ client, model: settings.model, dimensions: settings.dimensions }),
        );
      });
    case 'vertex':
      // The location and credential helpers are the chat adapter's: their 412 is re-coded here.
      return asEmbeddingRefusal(() => {
        const project = requireField(settings.gcpProject, 'vertex', 'gcpProject');
        const region = vertexLocation(settings.region);
        const host = override ?? settings.baseUrl ?? vertexHost(region);
        const transport = providerTransport(options, field, host);
        return refusalsTyped(
          new VertexEmbeddingProvider({
            locationUrl: vertexLocationPath(host, project, region),
            token: vertexTokenSource(credentials, {
              fetch: options.fetch ?? transport.policy.fetch(VERTEX_TOKEN_FIELD),
              ambientCredentials: options.ambientCredentials,
            }),
            model: settings.model,
            dimensions: settings.dimensions,
            fetch: transport.fetch,
          }),
        );
      });
    case 'ollama': {
      const baseUrl = override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.ollama;
      return refusalsTyped(
        new OllamaEmbeddingProvider({
          baseUrl,
          model: settings.model,
          dimensions: settings.dimensions,
          apiKey: credentials.apiKey,
          fetch: providerTransport(options, field, baseUrl).fetch,
        }),
      );
    }
    case 'local':
      return new LocalEmbeddingProvider({ dimensions: settings.dimensions });
    case 'local-semantic':
      return new LocalSemanticEmbeddingProvider({
        dimensions: settings.dimensions,
        allowOtherLanguages: settings.allowOtherLanguages,
        threads: options.embeddingThreads,
      });
  }
}

/**
 * Runs `build`, which uses helpers shared with the chat adapters (Vertex location and credential),
 * whose own refusal is 412 `llm_not_configured`: for the embedding provider it is 412
 * `embedding_not_configured` with the same details prefixed `embedding `, so the caller is told
 * which of the two providers to fix.
 * @throws AskError 412 `embedding_not_configured`; any other error unchanged.
 */
function asEmbeddingRefusal<T>(build: () => T): T {
  try {
    return build();
  } catch (err) {
    if (isAskError(err) && err.code === AskErrorCode.LlmNotConfigured)
      throw embeddingNotConfigured(`embedding ${err.details ?? ''}`.trim());
    throw err;
  }
}

/**
 * The adapter with egress refusals turned into the typed 403 `forbidden` (the original error kept as
 * `cause`, so `classifyUpstreamError` still sees the refusal); every other error passes unchanged.
 */
function refusalsTyped(provider: EmbeddingProvider): EmbeddingProvider {
  const embed = provider.embed.bind(provider);
  provider.embed = async (texts, signal, onUsage) => {
    try {
      return await embed(texts, signal, onUsage);
    } catch (err) {
      const refusal = isAskError(err) ? undefined : findEgressRefusal(err);
      if (!refusal) throw err;
      const typed = forbidden(refusal.message);
      Object.defineProperty(typed, 'cause', { value: refusal, enumerable: false });
      throw typed;
    }
  };
  return provider;
}
