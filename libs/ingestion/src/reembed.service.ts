import type { EmbeddingProvider } from '@ask/llm-providers';
import { Inject, Injectable } from '@nestjs/common';
import { contentHash, EmbeddingCallError, embedWithRetry, INGESTION_VERSION } from './embed-with-retry';
import { embeddingSpace, type IngestOptions } from './ingestion.service';
import { INSIGHTS_STORE, type InsightKind, type InsightsStore, KNOWLEDGE_STORE, type KnowledgeStore } from './ports';

/** What a re-embed did. */
export interface ReembedResult {
  /** Knowledge sources and insight / recommendation items that were outside the provider's space. */
  total: number;
  /** Sources and items moved into the provider's space. */
  reembedded: number;
  /** Sources replaced by a newer upload while they were re-embedded (the newer version is kept). */
  superseded: number;
  /** Sources and items the provider refused (they stay in the old space). */
  failed: number;
  /** Vectors written: chunks plus items. */
  vectors: number;
}

/** Items (insights, recommendations) listed per query while re-embedding. */
const ITEM_PAGE = 10_000;

/**
 * Rebuilds a project's vectors with its CURRENT embedding model from the text already stored: each
 * knowledge chunk's text (the chunking is kept), each insight's `name\ndescription` and each
 * recommendation's `title\nbody`. Only rows outside the provider's embedding space are touched, so a
 * re-embed that stopped half-way resumes where it stopped. Chunks are embedded in batches of the
 * provider's `maxBatchSize` across sources; each source is written in its own transaction.
 *
 * A source's content hash still names the old model, so a later upload of the same document is
 * re-chunked once (and then skipped as before). Insights get the content hash ingestion computes for
 * the new model, so re-sending them unchanged is skipped.
 */
@Injectable()
export class ReembedService {
  constructor(
    @Inject(KNOWLEDGE_STORE) private readonly knowledge: KnowledgeStore,
    @Inject(INSIGHTS_STORE) private readonly insights: InsightsStore,
  ) {}

  /** How many sources and items are outside the provider's space: the `total` of a re-embed. */
  async pending(projectId: string, provider: EmbeddingProvider): Promise<number> {
    const space = embeddingSpace(provider);
    return (
      (await this.knowledge.countSourcesOutsideSpace(projectId, space)) +
      (await this.insights.countOutsideSpace(projectId, 'insight', space)) +
      (await this.insights.countOutsideSpace(projectId, 'recommendation', space))
    );
  }

  /**
   * Re-embeds the project (see the class). Progress is reported after each source and item batch;
   * `uri` is the source's uri or the item's id.
   * @throws AskError for a provider failure that stops the run (as `IngestionService.ingest`); the
   *   signal's reason when aborted.
   */
  async reembed(
    projectId: string,
    provider: EmbeddingProvider,
    options: Omit<IngestOptions, 'chunkTokens' | 'overlapTokens'> = {},
  ): Promise<ReembedResult> {
    const space = embeddingSpace(provider);
    const total = await this.pending(projectId, provider);
    const result: ReembedResult = { total, reembedded: 0, superseded: 0, failed: 0, vectors: 0 };
    let done = 0;
    const report = (uri?: string) =>
      options.onProgress?.({
        done,
        total,
        chunks: result.vectors,
        created: result.reembedded,
        unchanged: result.superseded,
        failed: result.failed,
        ...(uri ? { uri } : {}),
      });
    const batchSize = Math.max(1, provider.maxBatchSize);
    const embed = async (texts: string[]): Promise<number[][]> => {
      const vectors: number[][] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        vectors.push(...(await embedWithRetry(provider, texts.slice(start, start + batchSize), options)));
      }
      return vectors;
    };
    /** Runs `work`; a refusal of this text alone fails the one source or batch and the run goes on. */
    const guarded = async (uris: string[], work: () => Promise<void>) => {
      try {
        await work();
      } catch (err) {
        if (!(err instanceof EmbeddingCallError)) throw err;
        if (err.failure.scope === 'run') throw err.failure.error;
        for (const uri of uris) await options.onDocumentFailed?.(uri, err.failure.error);
        result.failed += uris.length;
        done += uris.length;
        await report(uris[0]);
      }
    };

    const sources = await this.knowledge.sourcesOutsideSpace(projectId, space, Number.MAX_SAFE_INTEGER);
    for (const source of sources) {
      options.signal?.throwIfAborted();
      await guarded([source.uri], async () => {
        const chunks = await this.knowledge.chunkTexts(source.id);
        const vectors = await embed(chunks.map((c) => c.text));
        const written = await this.knowledge.reembedSource(
          projectId,
          source.id,
          source.contentHash,
          chunks.map((c, i) => ({ id: c.id, embedding: vectors[i] })),
          space,
        );
        if (written) {
          result.reembedded++;
          result.vectors += chunks.length;
        } else result.superseded++;
        done++;
        await report(source.uri);
      });
    }

    for (const kind of ['insight', 'recommendation'] as InsightKind[]) {
      for (;;) {
        const items = await this.insights.itemsOutsideSpace(projectId, kind, space, ITEM_PAGE);
        if (items.length === 0) break;
        const before = result.failed;
        for (let start = 0; start < items.length; start += batchSize) {
          options.signal?.throwIfAborted();
          const batch = items.slice(start, start + batchSize);
          await guarded(
            batch.map((i) => i.id),
            async () => {
              const vectors = await embedWithRetry(
                provider,
                batch.map((i) => i.text),
                options,
              );
              const written = await this.insights.reembedItems(
                projectId,
                kind,
                batch.map((item, i) => ({
                  id: item.id,
                  contentHash: contentHash({
                    v: INGESTION_VERSION,
                    model: space.model,
                    dims: space.dimensions,
                    text: item.text,
                  }),
                  embedding: vectors[i],
                })),
                space,
              );
              result.reembedded += written;
              result.vectors += written;
              done += batch.length;
              await report();
            },
          );
        }
        // Failed items stay outside the space: stop rather than list them again forever.
        if (result.failed > before || items.length < ITEM_PAGE) break;
      }
    }
    if (result.vectors > 0) await this.knowledge.refreshStatistics();
    return result;
  }
}
