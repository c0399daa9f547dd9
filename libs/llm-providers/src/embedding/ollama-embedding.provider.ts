import type { EmbeddingProvider, EmbeddingUsage } from '../types';
import { type FetchLike, postJson, trimSlash } from '../wire/http';
import { checkEmbeddings } from './check-embeddings';

/** `/api/embed`'s answer: `{ model, embeddings, total_duration, load_duration, prompt_eval_count }`. */
interface OllamaEmbedBody {
  model?: string;
  embeddings?: number[][];
  prompt_eval_count?: number;
  [field: string]: unknown;
}

/** Options of `OllamaEmbeddingProvider`. */
export interface OllamaEmbeddingOptions {
  /** The Ollama server, e.g. `http://localhost:11434`. */
  baseUrl: string;
  model: string;
  /** Vector length, from the project's settings (e.g. 768 for nomic-embed-text). */
  dimensions: number;
  apiKey?: string;
  fetch?: FetchLike;
}

/**
 * Ollama's `POST /api/embed` (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings)
 * with `truncate: false`, so an input longer than the model's context fails (400) instead of being
 * embedded from a silently cut text.
 *
 * @throws UpstreamHttpError for a non-2xx answer; EmbeddingShapeError when a vector is not
 *   `dimensions` long (a model change that changed the size is refused, never mixed).
 */
export class OllamaEmbeddingProvider implements EmbeddingProvider {
  readonly provider = 'ollama' as const;
  readonly model: string;
  readonly dimensions: number;
  readonly maxBatchSize = 256;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: OllamaEmbeddingOptions) {
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    if (texts.length === 0) return [];
    const headers: Record<string, string> = {};
    if (this.options.apiKey) headers['authorization'] = `Bearer ${this.options.apiKey}`;
    const response = await postJson(
      this.fetchImpl,
      'ollama',
      `${trimSlash(this.options.baseUrl)}/api/embed`,
      { model: this.model, input: texts, truncate: false },
      headers,
      signal,
    );
    const body = (await response.json()) as OllamaEmbedBody;
    if (onUsage) {
      // The answer's counts and durations, never its vectors.
      const { embeddings: _vectors, ...raw } = body;
      onUsage({
        inputTokens: typeof body.prompt_eval_count === 'number' ? body.prompt_eval_count : null,
        raw,
        convention: 'ollama',
        model: body.model,
      });
    }
    return checkEmbeddings('ollama', texts.length, this.dimensions, body.embeddings ?? []);
  }
}
