import type { EmbeddingProvider, EmbeddingUsage } from '../types';
import { checkEmbeddings } from '../embedding/check-embeddings';
import { type FetchLike, postJson } from '../wire/http';
import type { TokenSource } from './vertex-auth';

/** Options of `VertexEmbeddingProvider`. */
export interface VertexEmbeddingOptions {
  /** `{host}/v1/projects/{project}/locations/{region}`. */
  locationUrl: string;
  token: TokenSource;
  /** e.g. `text-embedding-005`, `gemini-embedding-001`. */
  model: string;
  /** Vector length, sent as `outputDimensionality`. */
  dimensions: number;
  fetch?: FetchLike;
}

/**
 * Text embeddings on Vertex AI via `:predict`
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api):
 * `{instances: [{content}], parameters: {outputDimensionality, autoTruncate: false}}` →
 * `predictions[].embeddings.values`. `autoTruncate: false` makes an over-long input an error instead of
 * a silently cut embedding. One instance per call for `gemini-embedding-001`, up to 250 for the `text-embedding-*` models.
 *
 * @throws UpstreamHttpError for a non-2xx answer; EmbeddingShapeError when a vector is not `dimensions` long.
 */
export class VertexEmbeddingProvider implements EmbeddingProvider {
  readonly provider = 'vertex' as const;
  readonly model: string;
  readonly dimensions: number;
  readonly maxBatchSize: number;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: VertexEmbeddingOptions) {
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.maxBatchSize = /gemini-embedding/.test(options.model) ? 1 : 250;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    if (texts.length === 0) return [];
    const token = await this.options.token();
    const vectors: number[][] = [];
    const counts: Array<number | null> = [];
    for (let i = 0; i < texts.length; i += this.maxBatchSize) {
      const batch = texts.slice(i, i + this.maxBatchSize);
      const response = await postJson(
        this.fetchImpl,
        'vertex',
        `${this.options.locationUrl}/publishers/google/models/${encodeURIComponent(this.model)}:predict`,
        {
          instances: batch.map((content) => ({ content })),
          parameters: { outputDimensionality: this.dimensions, autoTruncate: false },
        },
        { authorization: `Bearer ${token}` },
        signal,
      );
      const body = (await response.json()) as {
        predictions?: Array<{ embeddings?: { values?: number[]; statistics?: { token_count?: number } } }>;
      };
      for (const p of body.predictions ?? []) {
        vectors.push(p.embeddings?.values ?? []);
        const count = p.embeddings?.statistics?.token_count;
        counts.push(typeof count === 'number' ? count : null);
      }
    }
    // `statistics.token_count` per prediction: the call's input is their sum, when every one came.
    onUsage?.({
      inputTokens: counts.every((c) => c !== null) ? counts.reduce<number>((sum, c) => sum + (c ?? 0), 0) : null,
      raw: { token_count: counts },
    });
    return checkEmbeddings('vertex', texts.length, this.dimensions, vectors);
  }
}
