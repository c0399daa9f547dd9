import type { AskError } from '@ask/ask-errors';
import type { EmbeddingProvider } from '@ask/llm-providers';
import { Inject, Injectable } from '@nestjs/common';
import { chunkDocument, type ChunkOptions } from './chunk-document';
import { contentHash, type EmbedRetryOptions, INGESTION_VERSION } from './embed-with-retry';
import type { InsightsFile } from './insights-file';
import type { SourceDocument } from './load-documents';
import { type EmbeddingSpace, INSIGHTS_STORE, type InsightsStore, KNOWLEDGE_STORE, type KnowledgeStore } from './ports';
import { admitUpload, embeddingSpace } from './stages/admit';
import { EmbeddingBatches } from './stages/embed-batches';
import { ingestItems, type ItemsContext, ItemsProgress } from './stages/items';
import { storeDocument } from './stages/store';
import { IngestionTally } from './stages/tally';

export { embeddingSpace };

/** Progress of an ingestion, reported after each stored document (or item batch). */
export interface IngestionProgress {
  /** Documents (or items) finished, stored or skipped. */
  done: number;
  total: number;
  /** Chunks embedded and stored so far. */
  chunks: number;
  /** The document just finished, when there is one. */
  uri?: string;
  /** Documents (items) stored for the first time so far (insights: written). */
  created?: number;
  /** Documents whose chunks were replaced so far. */
  replaced?: number;
  /** Documents (items) skipped as unchanged so far. */
  unchanged?: number;
  /** Documents (items) that failed so far. */
  failed?: number;
}

/**
 * Called once per document (or item) that failed on its own: the provider refused its text (too
 * long, rejected as invalid). The run goes on with the others; the document keeps what was stored.
 */
export type DocumentFailedHandler = (uri: string, error: AskError) => unknown;

/** Options of {@link IngestionService.ingest}. */
export interface IngestOptions extends ChunkOptions, EmbedRetryOptions {
  onProgress?: (progress: IngestionProgress) => unknown;
  onDocumentFailed?: DocumentFailedHandler;
}

/** What an ingestion did. */
export interface IngestionResult {
  /** Documents given. */
  sources: number;
  /** Documents stored for the first time. */
  created: number;
  /** Documents whose chunks were replaced. */
  replaced: number;
  /** Documents skipped because their content hash was unchanged. */
  skippedUnchanged: number;
  /** Chunks embedded and stored by this call. */
  chunks: number;
  /** Documents that failed on their own (see `onDocumentFailed`); the others were stored. */
  failed: number;
}

/** What an insights ingestion did, per kind. */
export interface InsightsIngestionResult {
  insights: { written: number; skippedUnchanged: number; failed: number };
  recommendations: { written: number; skippedUnchanged: number; failed: number };
}

/**
 * Chunks written by one ingestion above which the planner statistics are refreshed at the end
 * (before autovacuum's next ANALYZE, a fresh table looks empty to the planner and search skips the
 * HNSW index).
 */
const STATISTICS_REFRESH_CHUNKS = 500;

/**
 * Loads documents, insights and recommendations into a project: chunk by tokens, embed in batches,
 * store. Documents are chunked one by one and their chunks embedded in batches of the provider's
 * `maxBatchSize` ACROSS documents (a manual of small pages makes full batches); each document is
 * stored in its own transaction as soon as all its chunks are embedded.
 */
@Injectable()
export class IngestionService {
  constructor(
    @Inject(KNOWLEDGE_STORE) private readonly knowledge: KnowledgeStore,
    @Inject(INSIGHTS_STORE) private readonly insights: InsightsStore,
  ) {}

  /**
   * Ingests `documents` into the project's knowledge base. A document whose content hash (of its
   * title, text, chunking settings and embedding model) equals the stored one is skipped without
   * chunking or embedding; a changed one has its chunks replaced.
   *
   * Each stored document keeps its detected language (`detectLanguage`); the project's text search
   * configuration follows the language most of its chunks are in (`applyTextSearchConfig`: set from
   * this upload's sample before anything is written when the project has none detected yet, and
   * again at the end), unless the project names one.
   *
   * Provider failures are typed (`classifyEmbeddingFailure`): retryable ones (429, 5xx) are retried
   * `providerRetries` times first. One that concerns only the text sent (too long, a 400) fails the
   * documents of that call (`onDocumentFailed`; a call spanning several documents is tried again per
   * document first) and the run goes on; any other (credentials, rate limit, wrong vector length)
   * stops the run with its typed error. Documents finished before stay stored.
   * @throws EmbeddingSpaceMismatchError before any work when the project already stores vectors of
   *   another model or length; AskError 400 `invalid_request` before any work when the documents are
   *   mostly in languages the embedding model does not cover (`checkEmbeddingLanguage`); AskError 502
   *   `embedding_auth_failed` / `embedding_dimensions_mismatch` / `embedding_upstream`, 429
   *   `rate_limited` (with retry_after) for a provider failure that stops the run; RangeError for bad
   *   chunk options; the signal's reason when aborted.
   */
  async ingest(
    projectId: string,
    documents: readonly SourceDocument[],
    provider: EmbeddingProvider,
    options: IngestOptions = {},
  ): Promise<IngestionResult> {
    const space = await admitUpload(
      this.knowledge,
      projectId,
      provider,
      documents.map((doc) => doc.text),
    );
    const chunkOptions = { chunkTokens: options.chunkTokens ?? 400, overlapTokens: options.overlapTokens ?? 60 };
    const tally = new IngestionTally(documents.length, options.onProgress);
    const batches = new EmbeddingBatches<SourceDocument>(provider, options, (entry) =>
      storeDocument(this.knowledge, projectId, space.model, entry, tally, options.onDocumentFailed),
    );
    for (const doc of documents) {
      options.signal?.throwIfAborted();
      const hash = documentHash(doc, chunkOptions, space);
      const skip = (await this.knowledge.findSource(projectId, doc.uri))?.contentHash === hash;
      await batches.add(doc, hash, skip ? [] : await chunkDocument(doc.text, chunkOptions), skip);
    }
    await batches.drain();
    const { result } = tally;
    // The main language of the project's knowledge now (these documents included) picks the configuration.
    if (result.created + result.replaced > 0) await this.knowledge.applyTextSearchConfig(projectId);
    if (result.chunks >= STATISTICS_REFRESH_CHUNKS) await this.knowledge.refreshStatistics();
    return result;
  }

  /**
   * Upserts the file's insights and recommendations by external id, embedding `name\ndescription`
   * and `title\nbody` in batches of the provider's `maxBatchSize`; items whose content hash (text and
   * embedding model) is unchanged are not re-embedded. Items absent from the file are kept.
   * Provider failures are handled as in {@link ingest} (a refused batch fails its items, reported
   * with their external id as `uri`). Progress `chunks` counts item vectors written.
   * @throws EmbeddingSpaceMismatchError when the project stores vectors of another model or length;
   *   AskError 400 `invalid_request` when the items are mostly in languages the model does not cover;
   *   AskError for a provider failure that stops the run.
   */
  async ingestInsights(
    projectId: string,
    file: InsightsFile,
    provider: EmbeddingProvider,
    options: Omit<IngestOptions, keyof ChunkOptions> = {},
  ): Promise<InsightsIngestionResult> {
    const insightText = (i: InsightsFile['insights'][number]) => `${i.name}\n${i.description}`;
    const recommendationText = (r: InsightsFile['recommendations'][number]) => `${r.title}\n${r.body}`;
    const texts = [...file.insights.map(insightText), ...file.recommendations.map(recommendationText)];
    // A project without detected knowledge takes the items' language for its full-text configuration.
    const space = await admitUpload(this.knowledge, projectId, provider, texts);
    const progress = new ItemsProgress(texts.length, options.onProgress);
    const ctx: ItemsContext = { insights: this.insights, projectId, provider, space, options, progress };
    const insights = await ingestItems(ctx, 'insight', file.insights, insightText, (batch) =>
      this.insights.upsertInsights(
        projectId,
        batch.map(({ item, hash, embedding }) => ({
          externalId: item.id,
          name: item.name,
          description: item.description,
          contentHash: hash,
          embedding,
        })),
        space.model,
      ),
    );
    const recommendations = await ingestItems(
      ctx,
      'recommendation',
      file.recommendations,
      recommendationText,
      (batch) =>
        this.insights.upsertRecommendations(
          projectId,
          batch.map(({ item, hash, embedding }) => ({
            externalId: item.id,
            title: item.title,
            body: item.body,
            contentHash: hash,
            embedding,
          })),
          space.model,
        ),
    );
    return { insights, recommendations };
  }
}

/** The content hash of a document under its chunking settings and embedding space (unchanged: not re-embedded). */
export function documentHash(
  doc: Pick<SourceDocument, 'title' | 'text'>,
  chunkOptions: Required<ChunkOptions>,
  space: EmbeddingSpace,
): string {
  return contentHash({
    v: INGESTION_VERSION,
    ...chunkOptions,
    model: space.model,
    dims: space.dimensions,
    title: doc.title,
    text: doc.text,
  });
}
