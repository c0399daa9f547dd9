import type OpenAI from 'openai';
import type { EmbeddingProvider, EmbeddingProviderId, EmbeddingUsage } from '../types';
import { checkEmbeddings } from './check-embeddings';

/** Options of `OpenAiEmbeddingProvider`. */
export interface OpenAiEmbeddingOptions {
  /** A configured `OpenAI` or `AzureOpenAI` client with `maxRetries: 0`. */
  client: OpenAI;
  provider: Extract<EmbeddingProviderId, 'openai' | 'azure-foundry'>;
  /** Model id, or the Azure deployment name. */
  model: string;
  /** Vector length, from the project's settings. */
  dimensions: number;
}

/**
 * Embeddings on the OpenAI wire (https://platform.openai.com/docs/api-reference/embeddings/create)
 * through the `openai` SDK: api.openai.com, OpenAI-compatible gateways, Azure OpenAI / Foundry.
 *
 * `dimensions` is sent to `text-embedding-3-*` models, which shorten their vectors on request
 * (https://platform.openai.com/docs/guides/embeddings#use-cases); other models are only checked.
 * Up to 2048 inputs per call (the API's limit).
 *
 * @throws the SDK's APIError; EmbeddingShapeError when a vector is not `dimensions` long.
 */
export class OpenAiEmbeddingProvider implements EmbeddingProvider {
  readonly provider: OpenAiEmbeddingOptions['provider'];
  readonly model: string;
  readonly dimensions: number;
  readonly maxBatchSize = 2048;

  constructor(private readonly options: OpenAiEmbeddingOptions) {
    this.provider = options.provider;
    this.model = options.model;
    this.dimensions = options.dimensions;
  }

  async embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    if (texts.length === 0) return [];
    const shortens = /text-embedding-3/.test(this.model);
    const response = await this.options.client.embeddings.create(
      { model: this.model, input: texts, ...(shortens ? { dimensions: this.dimensions } : {}) },
      { signal },
    );
    const vectors = [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    // `usage: { prompt_tokens, total_tokens }` (total = prompt: embeddings have no completion).
    const usage = response.usage as { prompt_tokens?: number } | undefined;
    onUsage?.({
      inputTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null,
      raw: response.usage,
      convention: 'openai',
      model: response.model,
    });
    return checkEmbeddings(this.provider, texts.length, this.dimensions, vectors);
  }
}
