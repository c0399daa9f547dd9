import { createHash } from 'node:crypto';
import { checkEmbeddingLanguage, type EmbeddingProvider } from '@ask/llm-providers';
import { EmbeddingSpaceMismatchError, InsightsRepository, KnowledgeRepository, type EmbeddingSpace } from '@ask/persistence';
import { Injectable } from '@nestjs/common';
import { chunkDocument, type ChunkOptions, type DocumentChunk } from './chunk-document';
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
}

/** Options of {@link IngestionService.ingest}. */
export interface IngestOptions extends ChunkOptions {
  onProgress?: (progress: IngestionProgress) => void;
  signal?: AbortSignal;
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
}

/** What an insights ingestion did, per kind. */
export interface InsightsIngestionResult {
  insights: { written: number; skippedUnchanged: number };
  recommendations: { written: number; skippedUnchanged: number };
}

/** Version of the chunking and hashing rules; bump to force a re-ingestion of everything. */
const INGESTION_VERSION = 1;

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
   * @throws EmbeddingSpaceMismatchError before any work when the project already stores vectors of
   *   another model or length; AskError 400 `invalid_request` before any work when the documents are
   *   mostly in languages the embedding model does not cover (`checkEmbeddingLanguage`); RangeError for bad chunk options or a provider returning vectors of
   *   the wrong count or length; the provider's own errors; the signal's reason when aborted.
   */
  async ingest(projectId: string, documents: readonly SourceDocument[], provider: EmbeddingProvider, options: IngestOptions = {}): Promise<IngestionResult> {
    const space = embeddingSpace(provider);
    await this.assertSpace(projectId, space);
    checkEmbeddingLanguage(provider, documents.map((doc) => doc.text));
    const chunkOptions = { chunkTokens: options.chunkTokens ?? 400, overlapTokens: options.overlapTokens ?? 60 };
    const result: IngestionResult = { sources: documents.length, created: 0, replaced: 0, skippedUnchanged: 0, chunks: 0 };
    let done = 0;
    const report = (uri: string) => options.onProgress?.({ done: ++done, total: documents.length, chunks: result.chunks, uri });

    const pending: Pending[] = [];
    const queue: Array<{ entry: Pending; index: number }> = [];
    const batchSize = Math.max(1, provider.maxBatchSize);

    const storeFinished = async () => {
      while (pending.length > 0 && pending[0].missing === 0) {
        const entry = pending.shift() as Pending;
        if (entry.skip) {
          result.skippedUnchanged++;
          report(entry.doc.uri);
          continue;
        }
        const stored = await this.knowledge.replaceSource(
          projectId,
          { uri: entry.doc.uri, title: entry.doc.title, contentHash: entry.hash },
          entry.chunks.map((c, i) => ({ text: c.text, tokenCount: c.tokenCount, embedding: entry.embeddings[i] })),
          space.model,
        );
        if (stored.status === 'unchanged') result.skippedUnchanged++;
        else {
          result[stored.status]++;
          result.chunks += stored.chunkCount;
        }
        report(entry.doc.uri);
      }
    };
    const embedBatch = async (size: number) => {
      const batch = queue.splice(0, size);
      const vectors = await provider.embed(
        batch.map(({ entry, index }) => entry.chunks[index].text),
        options.signal,
      );
      checkVectors(vectors, batch.length, space.dimensions);
      batch.forEach(({ entry, index }, i) => {
        entry.embeddings[index] = vectors[i];
        entry.missing--;
      });
      await storeFinished();
    };

    for (const doc of documents) {
      options.signal?.throwIfAborted();
      const hash = contentHash({ v: INGESTION_VERSION, ...chunkOptions, model: space.model, dims: space.dimensions, title: doc.title, text: doc.text });
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
    if (result.chunks >= STATISTICS_REFRESH_CHUNKS) await this.knowledge.refreshStatistics();
    return result;
  }

  /**
   * Upserts the file's insights and recommendations by external id, embedding `name\ndescription`
   * and `title\nbody` in batches of the provider's `maxBatchSize`; items whose content hash (text and
   * embedding model) is unchanged are not re-embedded. Items absent from the file are kept.
   * @throws EmbeddingSpaceMismatchError when the project stores vectors of another model or length;
   *   AskError 400 `invalid_request` when the items are mostly in languages the model does not cover;
   *   RangeError for a provider returning vectors of the wrong count or length.
   */
  async ingestInsights(
    projectId: string,
    file: InsightsFile,
    provider: EmbeddingProvider,
    options: { onProgress?: (progress: IngestionProgress) => void; signal?: AbortSignal } = {},
  ): Promise<InsightsIngestionResult> {
    const space = embeddingSpace(provider);
    await this.assertSpace(projectId, space);
    checkEmbeddingLanguage(provider, [
      ...file.insights.map((i) => `${i.name}\n${i.description}`),
      ...file.recommendations.map((r) => `${r.title}\n${r.body}`),
    ]);
    const total = file.insights.length + file.recommendations.length;
    let done = 0;
    const batchSize = Math.max(1, provider.maxBatchSize);
    const run = async <T extends { id: string }>(kind: 'insight' | 'recommendation', items: readonly T[], textOf: (item: T) => string, write: (batch: Array<{ item: T; hash: string; embedding: number[] }>) => Promise<number>) => {
      const stored = await this.insights.contentHashes(projectId, kind);
      const changed = items
        .map((item) => ({ item, hash: contentHash({ v: INGESTION_VERSION, model: space.model, dims: space.dimensions, text: textOf(item) }) }))
        .filter(({ item, hash }) => stored.get(item.id) !== hash);
      let written = 0;
      for (let start = 0; start < changed.length; start += batchSize) {
        options.signal?.throwIfAborted();
        const batch = changed.slice(start, start + batchSize);
        const vectors = await provider.embed(batch.map(({ item }) => textOf(item)), options.signal);
        checkVectors(vectors, batch.length, space.dimensions);
        written += await write(batch.map((b, i) => ({ ...b, embedding: vectors[i] })));
        done += batch.length;
        options.onProgress?.({ done, total, chunks: 0 });
      }
      done += items.length - changed.length;
      options.onProgress?.({ done, total, chunks: 0 });
      return { written, skippedUnchanged: items.length - changed.length };
    };
    const insights = await run('insight', file.insights, (i) => `${i.name}\n${i.description}`, (batch) =>
      this.insights.upsertInsights(
        projectId,
        batch.map(({ item, hash, embedding }) => ({ externalId: item.id, name: item.name, description: item.description, contentHash: hash, embedding })),
        space.model,
      ),
    );
    const recommendations = await run('recommendation', file.recommendations, (r) => `${r.title}\n${r.body}`, (batch) =>
      this.insights.upsertRecommendations(
        projectId,
        batch.map(({ item, hash, embedding }) => ({ externalId: item.id, title: item.title, body: item.body, contentHash: hash, embedding })),
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

function contentHash(value: object): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

function checkVectors(vectors: number[][], count: number, dimensions: number): void {
  if (vectors.length !== count) throw new RangeError(`embedding provider returned ${vectors.length} vectors for ${count} texts`);
  for (const v of vectors) {
    if (v.length !== dimensions) throw new RangeError(`embedding provider returned a vector of ${v.length} numbers, expected ${dimensions}`);
  }
}
