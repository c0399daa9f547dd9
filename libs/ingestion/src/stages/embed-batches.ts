import type { AskError } from '@ask/ask-errors';
import type { EmbeddingProvider } from '@ask/llm-providers';
import type { DocumentChunk } from '../chunk-document';
import { EmbeddingCallError, embedWithRetry, type EmbedRetryOptions } from '../embed-with-retry';

/** One document's chunks on their way through {@link EmbeddingBatches}. */
export interface PendingDocument<D> {
  doc: D;
  /** Unchanged since the last ingestion: nothing to embed or store. */
  skip: boolean;
  hash: string;
  chunks: DocumentChunk[];
  /** The chunks' vectors, by chunk index (filled as their batches return). */
  embeddings: number[][];
  /** Chunks not embedded yet. */
  missing: number;
  /** Set when the provider refused this document's text: it is reported failed, not stored. */
  failed?: AskError;
}

/**
 * The embed stage: chunks of consecutive documents embedded in batches of the provider's
 * `maxBatchSize` ACROSS documents (a manual of small pages makes full batches), each document handed
 * to `finish` in the order it was added as soon as all its chunks are embedded (or it failed, or it
 * was skipped).
 *
 * Provider failures (`embedWithRetry`, retryable ones already retried): one whose scope is the run
 * (credentials, rate limit, wrong vector length) is thrown as its typed AskError; one that concerns
 * only the text sent fails the document of that call, and a call spanning several documents is tried
 * again per document first to find which. A failed document's chunks still queued are dropped.
 */
export class EmbeddingBatches<D> {
  private readonly pending: Array<PendingDocument<D>> = [];
  private queue: Array<{ entry: PendingDocument<D>; index: number }> = [];
  private readonly batchSize: number;

  constructor(
    private readonly provider: EmbeddingProvider,
    private readonly options: EmbedRetryOptions,
    private readonly finish: (entry: PendingDocument<D>) => Promise<unknown>,
  ) {
    this.batchSize = Math.max(1, provider.maxBatchSize);
  }

  /** Queues the document's chunks, embeds every full batch, then finishes what is complete. */
  async add(doc: D, hash: string, chunks: DocumentChunk[], skip: boolean): Promise<void> {
    const entry = { doc, skip, hash, chunks, embeddings: new Array(chunks.length), missing: chunks.length };
    this.pending.push(entry);
    chunks.forEach((_, index) => this.queue.push({ entry, index }));
    while (this.queue.length >= this.batchSize) await this.embedBatch();
    await this.finishCompleted();
  }

  /** Embeds what is queued (the last, partial batch) and finishes every document. */
  async drain(): Promise<void> {
    while (this.queue.length > 0) await this.embedBatch();
    await this.finishCompleted();
  }

  private async embedBatch(): Promise<void> {
    const batch = this.queue.splice(0, this.batchSize);
    try {
      await this.embedInto(batch);
    } catch (err) {
      const error = refusedText(err);
      // The provider refused the text of this call: find which document it was, one by one.
      const entries = [...new Set(batch.map((b) => b.entry))];
      if (entries.length === 1) this.fail(entries[0], error);
      else {
        for (const entry of entries) {
          try {
            await this.embedInto(batch.filter((b) => b.entry === entry));
          } catch (single) {
            this.fail(entry, refusedText(single));
          }
        }
      }
    }
    await this.finishCompleted();
  }

  private async embedInto(items: Array<{ entry: PendingDocument<D>; index: number }>): Promise<void> {
    const vectors = await embedWithRetry(
      this.provider,
      items.map(({ entry, index }) => entry.chunks[index].text),
      this.options,
    );
    items.forEach(({ entry, index }, i) => {
      entry.embeddings[index] = vectors[i];
      entry.missing--;
    });
  }

  /** Marks a document failed: its chunks still queued are dropped and it is finished in order. */
  private fail(entry: PendingDocument<D>, error: AskError): void {
    entry.failed = error;
    entry.missing = 0;
    this.queue = this.queue.filter((q) => q.entry !== entry);
  }

  private async finishCompleted(): Promise<void> {
    while (this.pending.length > 0 && this.pending[0].missing === 0) {
      await this.finish(this.pending.shift() as PendingDocument<D>);
    }
  }
}

/**
 * The typed error of a call whose text the provider refused (the documents of the call fail).
 * @throws `err` itself when it is no provider failure, or the typed AskError of one that stops the run.
 */
export function refusedText(err: unknown): AskError {
  if (!(err instanceof EmbeddingCallError)) throw err;
  if (err.failure.scope === 'run') throw err.failure.error;
  return err.failure.error;
}
