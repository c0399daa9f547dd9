import { forbidden, llmNotConfigured } from '@ask/ask-errors';
import { type ProviderId, resolveModel } from '@ask/model-catalog';
import { selectTokenCounter, type TokenCounter } from '@ask/token-counting';
import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import OpenAI, { AzureOpenAI } from 'openai';
import { missingCloudCredential } from './cloud-credentials';
import { AnthropicChatProvider } from './chat/anthropic-chat.provider';
import { BedrockChatProvider } from './chat/bedrock-chat.provider';
import { OllamaChatProvider } from './chat/ollama-chat.provider';
import { OpenAiChatProvider, openAiCompatibleFetch } from './chat/openai-chat.provider';
import { LocalChatProvider } from './local/local-chat.provider';
import { vertexHost, vertexLocation, vertexLocationPath, vertexTokenSource } from './vertex/vertex-auth';
import { VERTEX_TOKEN_FIELD } from './vertex/vertex-credentials';
import { VertexClaudeChatProvider } from './vertex/vertex-claude-chat.provider';
import { VertexGeminiChatProvider } from './vertex/vertex-gemini-chat.provider';
import { type EgressPolicy, EgressRefusedError, STRICT_EGRESS } from './egress/egress-policy';
import type { ChatProvider, LlmSettings, ProviderCredentials } from './types';
import { type FetchLike, trimSlash } from './wire/http';
import { sseEndOfStreamFetch } from './wire/sse';

/** Where each provider lives when the project does not set `baseUrl`. */
export const DEFAULT_BASE_URLS = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  ollama: 'http://localhost:11434',
} as const;

/** Options of the provider factories (tests and the CLI point every provider at the fake upstream). */
export interface ProviderFactoryOptions {
  /**
   * Worker threads of the embedded semantic embedder (`local-semantic`, one model of ~240 MB each),
   * so ingestion embeds on that many cores; other providers ignore it. Default 1 (the calling thread).
   */
  embeddingThreads?: number;
  /**
   * Where provider calls may connect: the caller passes the process's `egressPolicyFor(config)` (its
   * operator's allow-list). Default {@link STRICT_EGRESS} (no allow-list, system DNS): the library
   * never reads the environment itself.
   */
  egress?: EgressPolicy;
  /**
   * `fetch` for the fetch-based adapters and the openai / Anthropic SDKs, REPLACING the egress-checked
   * transport (unit tests of wire formats only; production never passes it).
   */
  fetch?: FetchLike;
  /**
   * Base URL per provider, replacing the canonical endpoint WITHOUT changing what the settings mean:
   * `openai` keeps the canonical endpoint's behaviour (exact tiktoken counting, `max_completion_tokens`)
   * while pointing at `<override>` (include `/v1`); `anthropic`, `bedrock`, `vertex`, `ollama` and
   * `azure-foundry` replace the host (Azure's override replaces the resource endpoint). Overrides are
   * code-level settings, so their origins are allow-listed.
   */
  baseUrlOverrides?: Partial<Record<ProviderId, string>>;
  /** The `local` provider's token counter; defaults to the catalog's choice for `local`. */
  counter?: TokenCounter;
  /**
   * The operator enabled ambient cloud credentials for this project (`ASK_AMBIENT_CREDENTIALS_PROJECTS`,
   * see `ambientCredentialsAllowed` in @ask/config): a Vertex or Bedrock project that stores none then
   * uses the process's own (Application Default Credentials, the AWS default chain). Default false:
   * such a project is refused with the typed 412, and no tenant runs as the operator.
   */
  ambientCredentials?: boolean;
}

function requireField<T>(value: T | undefined, provider: string, what: string): T {
  if (value === undefined || value === null || value === '') {
    throw llmNotConfigured(`provider=${provider}: ${what} is not set`);
  }
  return value;
}

/** The field of the project's settings that names a chat or embedding endpoint. */
export type EndpointField = 'llm.baseUrl' | 'embedding.baseUrl';

/** What an adapter connects with: the checked `fetch` and the policy behind it. */
export interface ProviderTransport {
  fetch: FetchLike;
  policy: EgressPolicy;
}

const withOverrides = new WeakMap<EgressPolicy, Map<string, EgressPolicy>>();

/**
 * The transport of one adapter: the caller's `fetch` when it passed one (tests), else the egress
 * policy's checked fetch for `field`. The endpoint (`target`, when set) is checked first, without DNS.
 * @throws AskError 403 `forbidden` naming `field` when the endpoint is refused.
 */
export function providerTransport(
  options: ProviderFactoryOptions,
  field: EndpointField,
  target: string | undefined,
): ProviderTransport {
  const base = options.egress ?? STRICT_EGRESS;
  const overrides = Object.values(options.baseUrlOverrides ?? {}).filter((u): u is string => typeof u === 'string');
  let policy = base;
  if (overrides.length > 0) {
    const cache = withOverrides.get(base) ?? new Map<string, EgressPolicy>();
    withOverrides.set(base, cache);
    const key = overrides.join(' ');
    policy = cache.get(key) ?? base.withAllowed(overrides);
    cache.set(key, policy);
  }
  if (options.fetch) return { fetch: options.fetch, policy };
  if (target !== undefined && target !== '') {
    try {
      policy.checkUrl(target, field);
    } catch (err) {
      if (err instanceof EgressRefusedError) throw forbidden(err.message);
      throw err;
    }
  }
  return { fetch: policy.fetch(field), policy };
}

/** SDK options every client gets: no SDK retries (ours are in `streamWithRetry`), no SDK logs. */
const SDK_COMMON = { maxRetries: 0, logLevel: 'off' as const };

/**
 * An OpenAI-wire client for Azure: the classic deployment path
 * (`/openai/deployments/{model}/chat/completions?api-version=…`) when `apiVersion` is set, else the v1
 * API (`/openai/v1/…`, https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle).
 */
export function azureOpenAiClient(
  endpoint: string,
  apiKey: string,
  apiVersion: string | undefined,
  baseFetch?: FetchLike,
): OpenAI {
  const fetchImpl = sseEndOfStreamFetch(baseFetch);
  if (apiVersion) {
    return new AzureOpenAI({ endpoint: trimSlash(endpoint), apiKey, apiVersion, fetch: fetchImpl, ...SDK_COMMON });
  }
  return new OpenAI({
    baseURL: `${trimSlash(endpoint)}/openai/v1`,
    apiKey,
    defaultHeaders: { 'api-key': apiKey },
    organization: null,
    project: null,
    fetch: fetchImpl,
    ...SDK_COMMON,
  });
}

/**
 * An Anthropic Messages client: the key in `x-api-key` (Anthropic and Foundry document that header;
 * the SDK's own bearer is dropped), SDK retries and logs off.
 */
export function anthropicClient(baseURL: string, apiKey: string, fetchImpl?: FetchLike): Anthropic {
  return new Anthropic({
    baseURL: trimSlash(baseURL),
    apiKey,
    defaultHeaders: { 'x-api-key': apiKey, authorization: null },
    // The SDK drops a final event that ends at EOF without its blank line (see sseEndOfStreamFetch).
    fetch: sseEndOfStreamFetch(fetchImpl),
    ...SDK_COMMON,
  });
}

/**
 * A Bedrock Runtime client: the project's static keys (SigV4 only: an operator's
 * `AWS_BEARER_TOKEN_BEDROCK` in the environment is never used for them); without keys, the SDK's
 * default credential chain (environment, shared config/SSO profile, container or instance role) only
 * when `ambientCredentials` is true, i.e. the operator enabled it for the project. SigV4 signing by
 * the SDK; `endpoint` overrides the regional `bedrock-runtime.{region}.amazonaws.com` (VPC endpoints,
 * tests); one attempt (retries are `streamWithRetry`'s); `defaultsMode: 'legacy'` (the SDK's own
 * default), so an `AWS_DEFAULTS_MODE=auto` never asks the instance metadata service for a region.
 *
 * @throws AskError 412 `llm_not_configured` naming `credentials.awsAccessKeyId` /
 *   `credentials.awsSecretAccessKey` when either is missing and ambient credentials are off.
 */
export function bedrockClient(
  region: string,
  endpoint: string | undefined,
  credentials: ProviderCredentials,
  transport?: { policy: EgressPolicy; field: EndpointField },
  ambientCredentials = false,
): BedrockRuntimeClient {
  const { awsAccessKeyId, awsSecretAccessKey, awsSessionToken } = credentials;
  const missing = missingCloudCredential('bedrock', credentials);
  const staticKeys = missing === undefined;
  if (missing && !ambientCredentials) throw llmNotConfigured(`provider=bedrock: ${missing}`);
  // The SDK's HTTP/2 handler, with every host name it connects to resolved through the egress check.
  const checked = transport && !(endpoint && transport.policy.isAllowListed(endpoint));
  const requestHandler = transport
    ? new NodeHttp2Handler({
        disableConcurrentStreams: true,
        nodeHttp2ConnectOptions: { lookup: transport.policy.lookup(transport.field, checked) as never },
      })
    : undefined;
  return new BedrockRuntimeClient({
    region,
    ...(requestHandler ? { requestHandler } : {}),
    ...(endpoint ? { endpoint: trimSlash(endpoint) } : {}),
    ...(staticKeys
      ? {
          credentials: {
            accessKeyId: awsAccessKeyId as string,
            secretAccessKey: awsSecretAccessKey as string,
            ...(awsSessionToken ? { sessionToken: awsSessionToken } : {}),
          },
          authSchemePreference: ['sigv4'],
        }
      : {}),
    defaultsMode: 'legacy',
    maxAttempts: 1,
  });
}

/** Which wire a Vertex model speaks: Gemini (Google), Claude (Anthropic rawPredict), or MaaS (OpenAI-compatible). */
export function vertexWire(model: string): 'gemini' | 'claude' | 'maas' {
  if (isClaude(model)) return 'claude';
  if (/^(publishers\/google\/models\/)?gemini/i.test(model)) return 'gemini';
  if (model.includes('/') || /llama|qwen|deepseek|mistral|codestral|gpt-oss|jamba/i.test(model)) return 'maas';
  return 'gemini';
}

/** True for Claude model ids and deployment names (`claude-sonnet-4-6`, `anthropic.claude-…`). */
export function isClaude(model: string): boolean {
  return /(^|[./])claude/i.test(model);
}

/**
 * Builds the chat adapter a project's LLM settings name.
 *
 * | provider | adapter | needs |
 * | --- | --- | --- |
 * | `openai` | OpenAI Chat Completions; `baseUrl` set → an OpenAI-compatible gateway (vLLM, llama.cpp) | `apiKey` (optional with `baseUrl`) |
 * | `azure-foundry` | Claude models → Anthropic wire at `{baseUrl}/anthropic`; others → OpenAI wire (deployment path with `apiVersion`, else v1) | `baseUrl` (resource endpoint), `apiKey` |
 * | `anthropic` | Anthropic Messages + `count_tokens` | `apiKey` |
 * | `bedrock` | ConverseStream, SigV4 via the AWS SDK | `region`, `awsAccessKeyId` + `awsSecretAccessKey` (or ambient credentials the operator enabled) |
 * | `vertex` | Gemini `streamGenerateContent` + `:countTokens`; Claude via `streamRawPredict`; Llama/Qwen/DeepSeek/Mistral via the OpenAI-compatible MaaS endpoint | `gcpProject`, `region` (default `us-central1`), a service-account key or access token (or ambient ADC the operator enabled) |
 * | `ollama` | native `/api/chat` | nothing (`baseUrl` default `http://localhost:11434`) |
 * | `local` | the in-process stand-in | nothing |
 *
 * No request is made here. Credentials go only into the SDK clients; nothing is logged. Every adapter
 * connects through `options.egress` (see `providerTransport`): the endpoint is checked here, and
 * every connection again after DNS.
 *
 * @throws AskError 412 `llm_not_configured` when a required field or credential is missing;
 *   403 `forbidden` naming `llm.baseUrl` when the endpoint is refused.
 */
export function createChatProvider(
  settings: LlmSettings,
  credentials: ProviderCredentials,
  options: ProviderFactoryOptions = {},
): ChatProvider {
  const override = options.baseUrlOverrides?.[settings.provider];
  const field: EndpointField = 'llm.baseUrl';
  switch (settings.provider) {
    case 'openai': {
      const custom = settings.baseUrl !== undefined && settings.baseUrl !== '';
      const baseURL = override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.openai;
      const transport = providerTransport(options, field, baseURL);
      const apiKey = custom ? (credentials.apiKey ?? 'no-key') : requireField(credentials.apiKey, 'openai', 'apiKey');
      // The SDK drops a final event that ends at EOF without its blank line (see sseEndOfStreamFetch).
      const fetchImpl = sseEndOfStreamFetch(custom ? openAiCompatibleFetch(transport.fetch) : transport.fetch);
      const client = new OpenAI({
        baseURL,
        apiKey,
        organization: null,
        project: null,
        fetch: fetchImpl,
        ...SDK_COMMON,
      });
      return new OpenAiChatProvider({
        client,
        provider: 'openai',
        maxTokensField: custom ? 'max_tokens' : 'max_completion_tokens',
      });
    }
    case 'anthropic': {
      const apiKey = requireField(credentials.apiKey, 'anthropic', 'apiKey');
      const baseURL = override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.anthropic;
      const client = anthropicClient(baseURL, apiKey, providerTransport(options, field, baseURL).fetch);
      return new AnthropicChatProvider({ client, provider: 'anthropic', countTokens: true });
    }
    case 'azure-foundry': {
      const endpoint = requireField(override ?? settings.baseUrl, 'azure-foundry', 'baseUrl (the resource endpoint)');
      const apiKey = requireField(credentials.apiKey, 'azure-foundry', 'apiKey');
      const transport = providerTransport(options, field, endpoint);
      if (isClaude(settings.model)) {
        const client = anthropicClient(`${trimSlash(endpoint)}/anthropic`, apiKey, transport.fetch);
        return new AnthropicChatProvider({ client, provider: 'azure-foundry', countTokens: false });
      }
      const client = azureOpenAiClient(endpoint, apiKey, settings.apiVersion, transport.fetch);
      return new OpenAiChatProvider({ client, provider: 'azure-foundry', maxTokensField: 'max_completion_tokens' });
    }
    case 'bedrock': {
      const region = requireField(settings.region, 'bedrock', 'region');
      const endpoint = override ?? settings.baseUrl;
      const { policy } = providerTransport(options, field, endpoint);
      return new BedrockChatProvider(
        bedrockClient(region, endpoint, credentials, { policy, field }, options.ambientCredentials),
      );
    }
    case 'vertex': {
      const project = requireField(settings.gcpProject, 'vertex', 'gcpProject');
      const region = vertexLocation(settings.region);
      const host = override ?? settings.baseUrl ?? vertexHost(region);
      const transport = providerTransport(options, field, host);
      const locationUrl = vertexLocationPath(host, project, region);
      const token = vertexTokenSource(credentials, {
        fetch: options.fetch ?? transport.policy.fetch(VERTEX_TOKEN_FIELD),
        ambientCredentials: options.ambientCredentials,
      });
      const wire = vertexWire(settings.model);
      if (wire === 'claude') return new VertexClaudeChatProvider({ locationUrl, token, fetch: transport.fetch });
      if (wire === 'gemini') return new VertexGeminiChatProvider({ locationUrl, token, fetch: transport.fetch });
      const client = new OpenAI({
        baseURL: `${locationUrl}/endpoints/openapi`,
        apiKey: token,
        organization: null,
        project: null,
        fetch: sseEndOfStreamFetch(openAiCompatibleFetch(transport.fetch)),
        ...SDK_COMMON,
      });
      return new OpenAiChatProvider({ client, provider: 'vertex', maxTokensField: 'max_tokens' });
    }
    case 'ollama': {
      const baseUrl = override ?? settings.baseUrl ?? DEFAULT_BASE_URLS.ollama;
      return new OllamaChatProvider({
        baseUrl,
        numCtx: settings.numCtx,
        apiKey: credentials.apiKey,
        fetch: providerTransport(options, field, baseUrl).fetch,
      });
    }
    case 'local': {
      const counter =
        options.counter ??
        selectTokenCounter(
          { provider: 'local', model: settings.model },
          resolveModel({ provider: 'local', model: settings.model }).tokenizer,
        ).counter;
      return new LocalChatProvider({ counter });
    }
  }
}
