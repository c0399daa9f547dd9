import type { ProviderId } from '@ask/model-catalog';
import type { ChatMessage } from '@ask/token-counting';
import type { UsageConvention } from '@ask/usage-accounting';

/**
 * Embedding providers; `local` is the embedded lexical embedder (no model, no network),
 * `local-semantic` the embedded Universal Sentence Encoder lite (English, offline).
 */
export type EmbeddingProviderId =
  'local' | 'local-semantic' | 'openai' | 'azure-foundry' | 'bedrock' | 'vertex' | 'ollama';

/** A project's embedding settings (stored as JSON on the project; no secrets here). */
export interface EmbeddingSettings {
  provider: EmbeddingProviderId;
  model: string;
  /** Vector length; known before anything is stored. */
  dimensions: number;
  baseUrl?: string;
  /** Bedrock region, Vertex location. */
  region?: string;
  /** Vertex project id. */
  gcpProject?: string;
  /** Azure API version. */
  apiVersion?: string;
  /**
   * Embed knowledge even when it is mostly in languages the model does not cover (default false:
   * ingestion refuses it with a typed 400; see `checkEmbeddingLanguage`).
   */
  allowOtherLanguages?: boolean;
}

/** A project's LLM settings (stored as JSON on the project; no secrets here). */
export interface LlmSettings {
  provider: ProviderId;
  model: string;
  baseUrl?: string;
  /** Override of the catalog's context window, in tokens. */
  contextWindow?: number;
  /** Lower cap on the window for cost control (the second seed's maxContextTokens), in tokens. */
  maxContextTokens?: number;
  /** Tokens reserved for the answer; default 2,048 for ask. */
  maxTokens?: number;
  /** Ollama only: sent as options.num_ctx when set; otherwise the server's default applies. */
  numCtx?: number;
  region?: string;
  gcpProject?: string;
  apiVersion?: string;
}

/** Secrets of a project's providers, decrypted only in the worker that calls the provider. */
export interface ProviderCredentials {
  apiKey?: string;
  awsAccessKeyId?: string;
  awsSecretAccessKey?: string;
  awsSessionToken?: string;
  /** Vertex: an access token, or a service-account JSON for ADC. */
  gcpAccessToken?: string;
  gcpServiceAccountJson?: string;
}

/** One streamed chat call. `messages` starts with the system message when there is one. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** Completion budget in tokens (the provider's max_tokens). */
  maxTokens: number;
  signal?: AbortSignal;
}

/**
 * What a chat stream yields: text as it arrives, then usage as the provider reported it.
 *
 * The usage chunk's `promptTokens` / `completionTokens` are the adapter's summary (prompt including
 * cached parts); `raw` is the provider's usage object exactly as it arrived (no answer text in it),
 * to be read with `normalizeUsage(convention, raw)` from `@ask/usage-accounting`. `model` is the
 * model the provider says answered (it may differ from the one requested: aliases, Azure deployments)
 * and `finishReason` the provider's own stop reason, both when the wire reports them.
 */
export type ChatChunk = { type: 'delta'; text: string } | UsageChunk;

/** The one usage chunk that ends a chat stream (see {@link ChatChunk}). */
export interface UsageChunk {
  type: 'usage';
  promptTokens: number | null;
  completionTokens: number | null;
  raw?: unknown;
  convention?: UsageConvention;
  model?: string;
  finishReason?: string;
}

/** A chat provider adapter. Errors thrown are classified by `classifyUpstreamError`. */
export interface ChatProvider {
  readonly provider: ProviderId;
  streamChat(request: ChatRequest): AsyncIterable<ChatChunk>;
  /**
   * Exact prompt tokens of a request from the provider's count endpoint (Anthropic `count_tokens`,
   * Vertex `:countTokens`), where one exists.
   */
  countRequestTokens?(request: ChatRequest): Promise<number>;
}

/**
 * The usage of one embedding call as the provider reported it, handed to `embed`'s
 * `onUsage` once the call answered: `raw` is the provider's usage object exactly as it arrived (no
 * vector in it), read with `normalizeUsage(convention, raw)` when a convention is given; providers
 * whose wire has no usage convention of ours (Bedrock Titan's per-text `inputTextTokenCount`, Vertex's
 * per-prediction `statistics.token_count`) give their sum as `inputTokens` and the per-text figures as
 * `raw`. `model` is the model the provider says answered, when it says.
 */
export interface EmbeddingUsage {
  /** Input tokens of the call: the reported figure, or the embedder's own count (local); null when neither. */
  inputTokens: number | null;
  raw?: unknown;
  convention?: UsageConvention;
  model?: string;
}

/** An embedding provider adapter. Every vector has `dimensions` numbers. */
export interface EmbeddingProvider {
  readonly provider: EmbeddingProviderId;
  readonly model: string;
  readonly dimensions: number;
  /** Largest batch one call accepts. */
  readonly maxBatchSize: number;
  /** ISO 639-1 codes of the only languages the model covers; absent for multilingual or unknown models. */
  readonly languages?: readonly string[];
  /**
   * Embeds `texts` in one upstream call (Bedrock, Vertex: the calls one batch takes); `onUsage`, when
   * given, receives the call's usage once it answered (not called for a failed call).
   */
  embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]>;
}
