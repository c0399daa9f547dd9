import type { EmbeddingProvider } from '@ask/llm-providers';
import type { EmbeddingSpace, InsightsStore } from '../ports';
import { contentHash, embedWithRetry, INGESTION_VERSION } from '../embed-with-retry';
import type { IngestOptions, IngestionProgress } from '../ingestion.service';
import { refusedText } from './embed-batches';

/** Progress of an insights ingestion across both kinds: items done of `total`, vectors written, unchanged, failed. */
export class ItemsProgress {
  done = 0;
  written = 0;
  unchanged = 0;
  failed = 0;

  constructor(
    private readonly total: number,
    private readonly onProgress?: (progress: IngestionProgress) => unknown,
  ) {}

  /** Reports the totals so far (`chunks` and `created` are the vectors written). */
  async report(): Promise<unknown> {
    return this.onProgress?.({
      done: this.done,
      total: this.total,
      chunks: this.written,
      created: this.written,
      unchanged: this.unchanged,
      failed: this.failed,
    });
  }
}

/** What {@link ingestItems} works with. */
export interface ItemsContext {
  insights: Pick<InsightsStore, 'contentHashes'>;
  projectId: string;
  provider: EmbeddingProvider;
  space: EmbeddingSpace;
  options: Omit<IngestOptions, 'chunkTokens' | 'overlapTokens'>;
  progress: ItemsProgress;
}

/**
 * Embeds and writes the items of one kind whose content hash (text and embedding space) differs from
 * the stored one, in batches of the provider's `maxBatchSize`; progress is reported after each batch
 * and once at the end. A batch whose text the provider refused fails its items (`onDocumentFailed`
 * with each external id) and the run goes on.
 * @returns per kind: vectors written (`write`'s count), items skipped unchanged, items failed.
 * @throws the typed AskError of a provider failure that stops the run; the signal's reason when aborted.
 */
export async function ingestItems<T extends { id: string }>(
  ctx: ItemsContext,
  kind: 'insight' | 'recommendation',
  items: readonly T[],
  textOf: (item: T) => string,
  write: (batch: Array<{ item: T; hash: string; embedding: number[] }>) => Promise<number>,
): Promise<{ written: number; skippedUnchanged: number; failed: number }> {
  const { provider, space, options, progress } = ctx;
  const stored = await ctx.insights.contentHashes(ctx.projectId, kind);
  const changed = items
    .map((item) => ({
      item,
      hash: contentHash({ v: INGESTION_VERSION, model: space.model, dims: space.dimensions, text: textOf(item) }),
    }))
    .filter(({ item, hash }) => stored.get(item.id) !== hash);
  const batchSize = Math.max(1, provider.maxBatchSize);
  let written = 0;
  let failed = 0;
  for (let start = 0; start < changed.length; start += batchSize) {
    options.signal?.throwIfAborted();
    const batch = changed.slice(start, start + batchSize);
    let vectors: number[][];
    try {
      vectors = await embedWithRetry(
        provider,
        batch.map(({ item }) => textOf(item)),
        options,
      );
    } catch (err) {
      const error = refusedText(err);
      for (const { item } of batch) await options.onDocumentFailed?.(item.id, error);
      failed += batch.length;
      progress.failed += batch.length;
      progress.done += batch.length;
      await progress.report();
      continue;
    }
    const n = await write(batch.map((b, i) => ({ ...b, embedding: vectors[i] })));
    written += n;
    progress.written += n;
    progress.done += batch.length;
    await progress.report();
  }
  const unchanged = items.length - changed.length;
  progress.done += unchanged;
  progress.unchanged += unchanged;
  await progress.report();
  return { written, skippedUnchanged: unchanged, failed };
}
