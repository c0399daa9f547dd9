import type { AskError } from '@ask/ask-errors';
import {
  checkEmbeddingLanguage,
  detectLanguage,
  detectLanguages,
  type EmbeddingProvider,
  mainLanguage,
} from '@ask/llm-providers';
import {
  EmbeddingSpaceMismatchError,
  InsightsRepository,
  KnowledgeRepository,
  type EmbeddingSpace,
} from '@ask/persistence';
import { Injectable } from '@nestjs/common';
import { chunkDocument, type ChunkOptions, type DocumentChunk } from './chunk-document';
import {
  contentHash,
  EmbeddingCallError,
  embedWithRetry,
  type EmbedRetryOptions,
  INGESTION_VERSION,
} from './embed-with-retry';
import type { InsightsFile } from './insights-file';
import type { SourceDocument } from './load-documents';

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

interface Pending {
  doc: SourceDocument;
  /** Unchanged since the last ingestion: nothing to embed or store. */
  skip: boolean;
  hash: string;
  chunks: DocumentChunk[];
  embeddings: number[][];
  missing: number;
  /** Set when the provider refused this document's text: it is reported failed, not stored. */
  failed?: AskError;
}

/**
 * Loads documents, insights and recommendations into a project: chunk by tokens, embed in batches,
 * store. Documents are chunked one by one and their chunks embedded in batches of the provider's
 * `maxBatchSize` ACROSS documents (a manual of small pages makes full batches); each document is
 * stored in its own transaction as soon as all its chunks are embedded.
 */
@Injectable()
export class IngestionService {
  constructor(
    private readonly knowledge: KnowledgeRepository,
    private readonly insights: InsightsRepository,
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
    const space = embeddingSpace(provider);
    await this.assertSpace(projectId, space);
    const texts = documents.map((doc) => doc.text);
    const languages = detectLanguages(texts);
    checkEmbeddingLanguage(provider, texts, languages);
    // Before any chunk is written, so a new project's chunks are indexed with its language's configuration.
    await this.knowledge.applyTextSearchConfig(projectId, mainLanguage(languages));
    const chunkOptions = { chunkTokens: options.chunkTokens ?? 400, overlapTokens: options.overlapTokens ?? 60 };
    const result: IngestionResult = {
      sources: documents.length,
      created: 0,
      replaced: 0,
      skippedUnchanged: 0,
      chunks: 0,
      failed: 0,
    };
    let done = 0;
    const report = async (uri: string) =>
      options.onProgress?.({
        done: ++done,
        total: documents.length,
        chunks: result.chunks,
        uri,
        created: result.created,
        replaced: result.replaced,
        unchanged: result.skippedUnchanged,
        failed: result.failed,
      });

    const pending: Pending[] = [];
    let queue: Array<{ entry: Pending; index: number }> = [];
    const batchSize = Math.max(1, provider.maxBatchSize);

    const storeFinished = async () => {
      while (pending.length > 0 && pending[0].missing === 0) {
        const entry = pending.shift() as Pending;
        if (entry.failed) {
          result.failed++;
          await options.onDocumentFailed?.(entry.doc.uri, entry.failed);
          await report(entry.doc.uri);
          continue;
        }
        if (entry.skip) {
          result.skippedUnchanged++;
          await report(entry.doc.uri);
          continue;
        }
        const stored = await this.knowledge.replaceSource(
          projectId,
          {
            uri: entry.doc.uri,
            title: entry.doc.title,
            contentHash: entry.hash,
            language: detectLanguage(entry.doc.text),
          },
          entry.chunks.map((c, i) => ({ text: c.text, tokenCount: c.tokenCount, embedding: entry.embeddings[i] })),
          space.model,
        );
        if (stored.status === 'unchanged') result.skippedUnchanged++;
        else {
          result[stored.status]++;
          result.chunks += stored.chunkCount;
        }
        await report(entry.doc.uri);
      }
    };
    /** Marks a document failed: its chunks still queued are dropped and it is reported in order. */
    const fail = (entry: Pending, error: AskError) => {
      entry.failed = error;
      entry.missing = 0;
      queue = queue.filter((q) => q.entry !== entry);
    };
    const embedInto = async (items: Array<{ entry: Pending; index: number }>) => {
      const vectors = await embedWithRetry(
        provider,
        items.map(({ entry, index }) => entry.chunks[index].text),
        options,
      );
      items.forEach(({ entry, index }, i) => {
        entry.embeddings[index] = vectors[i];
        entry.missing--;
      });
    };
    const embedBatch = async (size: number) => {
      const batch = queue.splice(0, size);
      try {
        await embedInto(batch);
      } catch (err) {
        if (!(err instanceof EmbeddingCallError)) throw err;
        if (err.failure.scope === 'run') throw err.failure.error;
        // The provider refused the text of this call: find which document it was, one by one.
        const entries = [...new Set(batch.map((b) => b.entry))];
        if (entries.length === 1) fail(entries[0], err.failure.error);
        else {
          for (const entry of entries) {
            try {
              await embedInto(batch.filter((b) => b.entry === entry));
            } catch (single) {
              if (!(single instanceof EmbeddingCallError)) throw single;
              if (single.failure.scope === 'run') throw single.failure.error;
              fail(entry, single.failure.error);
            }
          }
        }
      }
      await storeFinished();
    };

    for (const doc of documents) {
      options.signal?.throwIfAborted();
      const hash = contentHash({
        v: INGESTION_VERSION,
        ...chunkOptions,
        model: space.model,
        dims: space.dimensions,
        title: doc.title,
        text: doc.text,
      });
      const skip = (await this.knowledge.findSource(projectId, doc.uri))?.contentHash === hash;
      const chunks = skip ? [] : await chunkDocument(doc.text, chunkOptions);
      const entry: Pending = { doc, skip, hash, chunks, embeddings: new Array(chunks.length), missing: chunks.length };
      pending.push(entry);
      chunks.forEach((_, index) => queue.push({ entry, index }));
      while (queue.length >= batchSize) await embedBatch(batchSize);
      await storeFinished();
    }
    while (queue.length > 0) await embedBatch(batchSize);
    await storeFinished();
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
    const space = embeddingSpace(provider);
    await this.assertSpace(projectId, space);
    const texts = [
      ...file.insights.map((i) => `${i.name}\n${i.description}`),
      ...file.recommendations.map((r) => `${r.title}\n${r.body}`),
    ];
    const languages = detectLanguages(texts);
    checkEmbeddingLanguage(provider, texts, languages);
    // A project without detected knowledge takes the items' language for its full-text configuration.
    await this.knowledge.applyTextSearchConfig(projectId, mainLanguage(languages));
    const total = file.insights.length + file.recommendations.length;
    let done = 0;
    const batchSize = Math.max(1, provider.maxBatchSize);
    // Totals across both kinds, for progress.
    const all = { written: 0, failed: 0, unchanged: 0 };
    const progress = () =>
      options.onProgress?.({
        done,
        total,
        chunks: all.written,
        created: all.written,
        unchanged: all.unchanged,
        failed: all.failed,
      });
    const run = async <T extends { id: string }>(
      kind: 'insight' | 'recommendation',
      items: readonly T[],
      textOf: (item: T) => string,
      write: (batch: Array<{ item: T; hash: string; embedding: number[] }>) => Promise<number>,
    ) => {
      const stored = await this.insights.contentHashes(projectId, kind);
      const changed = items
        .map((item) => ({
          item,
          hash: contentHash({ v: INGESTION_VERSION, model: space.model, dims: space.dimensions, text: textOf(item) }),
        }))
        .filter(({ item, hash }) => stored.get(item.id) !== hash);
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
          if (!(err instanceof EmbeddingCallError)) throw err;
          if (err.failure.scope === 'run') throw err.failure.error;
          for (const { item } of batch) await options.onDocumentFailed?.(item.id, err.failure.error);
          failed += batch.length;
          all.failed += batch.length;
          done += batch.length;
          await progress();
          continue;
        }
        const n = await write(batch.map((b, i) => ({ ...b, embedding: vectors[i] })));
        written += n;
        all.written += n;
        done += batch.length;
        await progress();
      }
      done += items.length - changed.length;
      all.unchanged += items.length - changed.length;
      await progress();
      return { written, skippedUnchanged: items.length - changed.length, failed };
    };
    const insights = await run(
      'insight',
      file.insights,
      (i) => `${i.name}\n${i.description}`,
      (batch) =>
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
    const recommendations = await run(
      'recommendation',
      file.recommendations,
      (r) => `${r.title}\n${r.body}`,
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

  /** @throws EmbeddingSpaceMismatchError when the project stores vectors of a space other than `space`. */
  private async assertSpace(projectId: string, space: EmbeddingSpace): Promise<void> {
    const stored = await this.knowledge.storedEmbeddingSpaces(projectId);
    if (stored.some((s) => s.model !== space.model || s.dimensions !== space.dimensions)) {
      throw new EmbeddingSpaceMismatchError(projectId, stored, space);
    }
  }
}

/** The embedding space of a provider: `provider/model` and its vector length. */
export function embeddingSpace(provider: EmbeddingProvider): EmbeddingSpace {
  return { model: `${provider.provider}/${provider.model}`, dimensions: provider.dimensions };
}
