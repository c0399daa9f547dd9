import { type BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import type { EmbeddingProvider, EmbeddingUsage } from '../types';
import { checkEmbeddings } from './check-embeddings';

/** Options of `BedrockEmbeddingProvider`. */
export interface BedrockEmbeddingOptions {
  /** A client with `maxAttempts: 1`. */
  client: BedrockRuntimeClient;
  /** A Titan Text Embeddings model id, e.g. `amazon.titan-embed-text-v2:0`. */
  model: string;
  /** Vector length: 256, 512 or 1024 for Titan v2 (sent as `dimensions`); 1536 for Titan v1 (not sent). */
  dimensions: number;
}

/** How many InvokeModel calls run at once (Titan embeds one text per call). */
const CONCURRENCY = 8;

/**
 * Titan Text Embeddings on Amazon Bedrock via InvokeModel
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html):
 * body `{inputText, dimensions, normalize: true}` → `{embedding, inputTextTokenCount}`, one text per call,
 * up to 8 calls in flight.
 *
 * @throws the SDK's ServiceException (ValidationException "Too many input tokens…" past 8192 tokens);
 *   EmbeddingShapeError when a vector is not `dimensions` long.
 */
export class BedrockEmbeddingProvider implements EmbeddingProvider {
  readonly provider = 'bedrock' as const;
  readonly model: string;
  readonly dimensions: number;
  readonly maxBatchSize = 64;

  constructor(private readonly options: BedrockEmbeddingOptions) {
    this.model = options.model;
    this.dimensions = options.dimensions;
  }

  async embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    const vectors: number[][] = new Array(texts.length);
    const counts: Array<number | null> = new Array(texts.length).fill(null);
    const v2 = /titan-embed-text-v2/.test(this.model);
    let next = 0;
    const worker = async () => {
      while (next < texts.length) {
        const i = next++;
        const body = v2
          ? { inputText: texts[i], dimensions: this.dimensions, normalize: true }
          : { inputText: texts[i] };
        const output = await this.options.client.send(
          new InvokeModelCommand({
            modelId: this.model,
            contentType: 'application/json',
            accept: 'application/json',
            body: JSON.stringify(body),
          }),
          { abortSignal: signal },
        );
        const parsed = JSON.parse(new TextDecoder().decode(output.body)) as {
          embedding?: number[];
          inputTextTokenCount?: number;
        };
        vectors[i] = parsed.embedding ?? [];
        counts[i] = typeof parsed.inputTextTokenCount === 'number' ? parsed.inputTextTokenCount : null;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, texts.length) }, worker));
    // One figure per text (one InvokeModel each): the batch's input is their sum, when every one came.
    onUsage?.({
      inputTokens: counts.every((c) => c !== null) ? counts.reduce<number>((sum, c) => sum + (c ?? 0), 0) : null,
      raw: { inputTextTokenCount: counts },
    });
    return checkEmbeddings('bedrock', texts.length, this.dimensions, vectors);
  }
}
