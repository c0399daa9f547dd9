import type { TextSearchConfig } from '@ask/ask-contracts';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { EmbeddingSpaceMismatchError, type EmbeddingSpace } from '../errors';
import { isUuid } from '../ids';
import { assertDimensions, vectorParam } from '../vector';
import { applyTextSearchConfig } from './text-search-config';

/** A knowledge document's identity and version. */
export interface KnowledgeSourceInput {
  /** Where it came from (relative path, URL or id); unique per project, the replace key. */
  uri: string;
  title: string;
  /** SHA-256 (hex) of the document text; equal to the stored one → the document is skipped. */
  contentHash: string;
  /** ISO 639-1 code of the document's detected language (`detectLanguage`); null/absent: unknown. */
  language?: string | null;
}

/** One chunk to store, in document order. */
export interface KnowledgeChunkInput {
  text: string;
  /** Tokens of `text` under the chunker's counter (o200k_base). */
  tokenCount: number;
  /**
   * The trail of headings above the chunk in its page (`Storage > Configuring retention`), null or
   * absent under none; indexed by the full-text leg with weight B (the page title with A).
   */
  section?: string | null;
  /** Its embedding; every chunk of a call has the same length. */
  embedding: readonly number[];
}

/** A stored knowledge source. */
export interface KnowledgeSource {
  id: string;
  uri: string;
  title: string;
  contentHash: string;
  chunkCount: number;
  embeddingDims: number;
  embeddingModel: string;
  /** ISO 639-1 code detected at ingestion; null: unknown. */
  language: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What {@link KnowledgeRepository.replaceSource} did. */
export interface ReplaceSourceResult {
  sourceId: string;
  /** `created`: new uri; `replaced`: its chunks were replaced; `unchanged`: same hash, nothing written. */
  status: 'created' | 'replaced' | 'unchanged';
  chunkCount: number;
}

/** Rows inserted per INSERT statement when storing chunks (keeps each statement's parameters small). */
const CHUNK_INSERT_BATCH = 200;

/** Knowledge sources and their chunks, written one whole source per transaction. */
@Injectable()
export class KnowledgeRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Stores a document's chunks, replacing any earlier version of the same uri, in ONE transaction:
   * the source row is locked, an unchanged `contentHash` returns `unchanged` without writing, else the
   * old chunks are deleted and the new ones inserted with ordinals 0..n−1.
   * @param embeddingModel `provider/model` that produced the embeddings.
   * @throws EmbeddingSpaceMismatchError when the project already stores vectors of another model or
   *   length (nothing is written); RangeError when the chunks' embeddings differ in length.
   */
  async replaceSource(
    projectId: string,
    source: KnowledgeSourceInput,
    chunks: readonly KnowledgeChunkInput[],
    embeddingModel: string,
  ): Promise<ReplaceSourceResult> {
    const dimensions = chunks[0]?.embedding.length ?? 0;
    if (chunks.length > 0) assertDimensions(dimensions);
    for (const chunk of chunks) {
      if (chunk.embedding.length !== dimensions) {
        throw new RangeError(`chunk embeddings differ in length: ${chunk.embedding.length} vs ${dimensions}`);
      }
    }
    return this.dataSource.transaction(async (manager) => {
      // Serialise writers of one project so the embedding-space check cannot race.
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`knowledge:${projectId}`]);
      const existing: Array<{ id: string; content_hash: string; chunk_count: number }> = await manager.query(
        'SELECT id, content_hash, chunk_count FROM knowledge_sources WHERE project_id = $1 AND uri = $2 FOR UPDATE',
        [projectId, source.uri],
      );
      const current = existing[0];
      if (current && current.content_hash === source.contentHash) {
        return { sourceId: current.id, status: 'unchanged', chunkCount: current.chunk_count };
      }
      if (chunks.length > 0) {
        await assertEmbeddingSpace(manager, projectId, { model: embeddingModel, dimensions }, current?.id ?? null);
      }
      let sourceId: string;
      if (current) {
        sourceId = current.id;
        await manager.query('DELETE FROM knowledge_chunks WHERE source_id = $1', [sourceId]);
        await manager.query(
          `UPDATE knowledge_sources SET title = $2, content_hash = $3, chunk_count = $4, embedding_dims = $5,
                  embedding_model = $6, language = $7, updated_at = now() WHERE id = $1`,
          [
            sourceId,
            source.title,
            source.contentHash,
            chunks.length,
            dimensions,
            embeddingModel,
            source.language ?? null,
          ],
        );
      } else {
        const rows = await manager.query(
          `INSERT INTO knowledge_sources (project_id, uri, title, content_hash, chunk_count, embedding_dims, embedding_model, language)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
          [
            projectId,
            source.uri,
            source.title,
            source.contentHash,
            chunks.length,
            dimensions,
            embeddingModel,
            source.language ?? null,
          ],
        );
        sourceId = rows[0].id;
      }
      for (let start = 0; start < chunks.length; start += CHUNK_INSERT_BATCH) {
        const batch = chunks.slice(start, start + CHUNK_INSERT_BATCH);
        await manager.query(
          `INSERT INTO knowledge_chunks (source_id, project_id, ordinal, text, token_count, embedding, embedding_dims,
                                         embedding_model, title, section)
           SELECT $1, $2, c.ordinal, c.text, c.token_count, c.embedding::vector, $3, $8, $9, c.section
             FROM unnest($4::int[], $5::text[], $6::int[], $7::text[], $10::text[])
               AS c(ordinal, text, token_count, embedding, section)`,
          [
            sourceId,
            projectId,
            dimensions,
            batch.map((_, i) => start + i),
            batch.map((c) => c.text),
            batch.map((c) => c.tokenCount),
            batch.map((c) => vectorParam(c.embedding)),
            embeddingModel,
            source.title,
            batch.map((c) => c.section ?? null),
          ],
        );
      }
      return { sourceId, status: current ? 'replaced' : 'created', chunkCount: chunks.length };
    });
  }

  /** The project's source with this uri, or null. */
  async findSource(projectId: string, uri: string): Promise<KnowledgeSource | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.dataSource.query(`${SOURCE_SELECT} WHERE project_id = $1 AND uri = $2`, [projectId, uri]);
    return rows[0] ? toSource(rows[0]) : null;
  }

  /** The project's sources, by uri. */
  async listSources(projectId: string): Promise<KnowledgeSource[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.dataSource.query(`${SOURCE_SELECT} WHERE project_id = $1 ORDER BY uri`, [projectId]);
    return rows.map(toSource);
  }

  /**
   * Deletes the project's source with this uri and its chunks.
   * @returns false when there was none.
   */
  async deleteSource(projectId: string, uri: string): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    return this.dataSource.transaction(async (manager) => {
      // The project's knowledge lock before the source row's: the term statistics trigger takes it
      // when the chunks go, and a writer replacing this uri holds it while it waits for the row.
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`knowledge:${projectId}`]);
      const [, affected] = await manager.query('DELETE FROM knowledge_sources WHERE project_id = $1 AND uri = $2', [
        projectId,
        uri,
      ]);
      return affected > 0;
    });
  }

  /**
   * Sets the project's text search configuration in force from its knowledge's detected language
   * (unless the project names one) and re-derives its rows' full-text vectors when it changes
   * ({@link applyTextSearchConfig}), in one transaction.
   * @param provisionalLanguage an ingestion's detected language (ISO 639-1), used while the project
   *   stores no knowledge of a detected language.
   * @returns the configuration in force; null for an unknown project.
   */
  async applyTextSearchConfig(
    projectId: string,
    provisionalLanguage?: string | null,
  ): Promise<TextSearchConfig | null> {
    if (!isUuid(projectId)) return null;
    return this.dataSource.transaction((manager) => applyTextSearchConfig(manager, projectId, provisionalLanguage));
  }

  /**
   * Refreshes the planner's statistics of the knowledge tables (`ANALYZE`), so that right after a
   * bulk ingestion the planner knows the project's row count and picks the HNSW index instead of an
   * exact scan. Samples at most 30,000 rows per table (PostgreSQL's default statistics target).
   */
  async refreshStatistics(): Promise<void> {
    await this.dataSource.query('ANALYZE knowledge_sources, knowledge_chunks');
  }

  /**
   * Deletes every knowledge source, insight and recommendation of the project (before re-embedding
   * it with another model).
   */
  async deleteAllForProject(projectId: string): Promise<void> {
    if (!isUuid(projectId)) return;
    await this.dataSource.transaction(async (manager) => {
      for (const table of ['knowledge_sources', 'insights', 'recommendations']) {
        await manager.query(`DELETE FROM ${table} WHERE project_id = $1`, [projectId]);
      }
    });
  }

  /**
   * The embedding spaces the project stores vectors of, other than `current`: non-empty when the
   * project's embedding model (or length) changed and its knowledge is not re-embedded yet, so an ask
   * or an upload must be refused (409 `embedding_space_changed`) instead of mixing spaces.
   */
  async spacesOtherThan(projectId: string, current: EmbeddingSpace): Promise<EmbeddingSpace[]> {
    if (!isUuid(projectId)) return [];
    const stored = await storedSpaces(this.dataSource.manager, projectId, null);
    return stored.filter((s) => s.model !== current.model || s.dimensions !== current.dimensions);
  }

  /**
   * The project's non-empty sources whose vectors are NOT of `space`, by uri, at most `limit`: what a
   * re-embed still has to rebuild.
   */
  async sourcesOutsideSpace(
    projectId: string,
    space: EmbeddingSpace,
    limit: number,
  ): Promise<Array<{ id: string; uri: string; contentHash: string; chunkCount: number }>> {
    if (!isUuid(projectId)) return [];
    const rows: Array<{ id: string; uri: string; content_hash: string; chunk_count: number }> =
      await this.dataSource.query(
        `SELECT id, uri, content_hash, chunk_count FROM knowledge_sources
        WHERE project_id = $1 AND chunk_count > 0 AND (embedding_model <> $2 OR embedding_dims <> $3)
        ORDER BY uri LIMIT $4`,
        [projectId, space.model, space.dimensions, limit],
      );
    return rows.map((r) => ({ id: r.id, uri: r.uri, contentHash: r.content_hash, chunkCount: r.chunk_count }));
  }

  /** How many non-empty sources of the project are outside `space` (see {@link sourcesOutsideSpace}). */
  async countSourcesOutsideSpace(projectId: string, space: EmbeddingSpace): Promise<number> {
    if (!isUuid(projectId)) return 0;
    const [row] = await this.dataSource.query(
      `SELECT count(*)::int AS n FROM knowledge_sources
        WHERE project_id = $1 AND chunk_count > 0 AND (embedding_model <> $2 OR embedding_dims <> $3)`,
      [projectId, space.model, space.dimensions],
    );
    return row.n;
  }

  /** The stored chunks of a source, in order: the text a re-embed embeds again. */
  async chunkTexts(sourceId: string): Promise<Array<{ id: string; text: string }>> {
    if (!isUuid(sourceId)) return [];
    return this.dataSource.query('SELECT id, text FROM knowledge_chunks WHERE source_id = $1 ORDER BY ordinal', [
      sourceId,
    ]);
  }

  /**
   * Moves one source into `space`: replaces each chunk's vector (by chunk id) and sets the chunks' and
   * the source's length and model, in one transaction. Nothing is written when the source was replaced
   * or deleted since it was read (`contentHash` differs): the newer version is kept.
   * @returns false when nothing was written for that reason.
   * @throws RangeError when a vector is not `space.dimensions` long, or the ids do not cover its chunks.
   */
  async reembedSource(
    projectId: string,
    sourceId: string,
    contentHash: string,
    chunks: ReadonlyArray<{ id: string; embedding: readonly number[] }>,
    space: EmbeddingSpace,
  ): Promise<boolean> {
    assertDimensions(space.dimensions);
    for (const chunk of chunks) {
      if (chunk.embedding.length !== space.dimensions)
        throw new RangeError(`embedding of ${chunk.embedding.length} numbers, expected ${space.dimensions}`);
    }
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`knowledge:${projectId}`]);
      const [current] = await manager.query(
        'SELECT content_hash, chunk_count FROM knowledge_sources WHERE id = $1 AND project_id = $2 FOR UPDATE',
        [sourceId, projectId],
      );
      if (!current || current.content_hash !== contentHash) return false;
      if (current.chunk_count !== chunks.length)
        throw new RangeError(`source ${sourceId} has ${current.chunk_count} chunks, got ${chunks.length} vectors`);
      for (let start = 0; start < chunks.length; start += CHUNK_INSERT_BATCH) {
        const batch = chunks.slice(start, start + CHUNK_INSERT_BATCH);
        await manager.query(
          `UPDATE knowledge_chunks k SET embedding = x.embedding::vector, embedding_dims = $2, embedding_model = $3
             FROM unnest($4::uuid[], $5::text[]) AS x(id, embedding)
            WHERE k.id = x.id AND k.source_id = $1`,
          [sourceId, space.dimensions, space.model, batch.map((c) => c.id), batch.map((c) => vectorParam(c.embedding))],
        );
      }
      await manager.query(
        'UPDATE knowledge_sources SET embedding_dims = $2, embedding_model = $3, updated_at = now() WHERE id = $1',
        [sourceId, space.dimensions, space.model],
      );
      return true;
    });
  }

  /**
   * The embedding spaces (model and length) of every vector stored for the project, across knowledge,
   * insights and recommendations; more than one means vectors were mixed (the guards prevent it).
   */
  async storedEmbeddingSpaces(projectId: string): Promise<EmbeddingSpace[]> {
    if (!isUuid(projectId)) return [];
    return storedSpaces(this.dataSource.manager, projectId, null);
  }

  /** @throws EmbeddingSpaceMismatchError when the project stores vectors of a space other than `incoming`. */
  async checkEmbeddingSpace(projectId: string, incoming: EmbeddingSpace): Promise<void> {
    if (!isUuid(projectId)) return;
    await assertEmbeddingSpace(this.dataSource.manager, projectId, incoming, null);
  }
}

const SOURCE_SELECT =
  'SELECT id, uri, title, content_hash, chunk_count, embedding_dims, embedding_model, language, created_at, updated_at FROM knowledge_sources';

interface SourceRow {
  id: string;
  uri: string;
  title: string;
  content_hash: string;
  chunk_count: number;
  embedding_dims: number;
  embedding_model: string;
  language: string | null;
  created_at: Date;
  updated_at: Date;
}

function toSource(r: SourceRow): KnowledgeSource {
  return {
    id: r.id,
    uri: r.uri,
    title: r.title,
    contentHash: r.content_hash,
    chunkCount: r.chunk_count,
    embeddingDims: r.embedding_dims,
    embeddingModel: r.embedding_model,
    language: r.language,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * The distinct embedding spaces (`model`, `dimensions`) of the vectors project `$1` stores: its
 * non-empty knowledge sources, insights and recommendations (what {@link storedSpaces} returns, without
 * the excluded source). For a subquery in one statement with other reads (`ProjectsRepository.findForAsk`).
 */
export const STORED_SPACES_SQL = `SELECT DISTINCT embedding_model AS model, embedding_dims AS dimensions FROM (
     SELECT embedding_model, embedding_dims FROM knowledge_sources WHERE project_id = $1 AND chunk_count > 0
     UNION ALL SELECT embedding_model, embedding_dims FROM insights WHERE project_id = $1
     UNION ALL SELECT embedding_model, embedding_dims FROM recommendations WHERE project_id = $1
   ) stored`;

/**
 * Distinct (model, dimensions) of the project's stored vectors, ignoring the knowledge source
 * `exceptSourceId` (the one being replaced) and empty sources.
 */
export async function storedSpaces(
  manager: EntityManager,
  projectId: string,
  exceptSourceId: string | null,
): Promise<EmbeddingSpace[]> {
  const rows: Array<{ model: string; dimensions: number }> = await manager.query(
    `SELECT DISTINCT embedding_model AS model, embedding_dims AS dimensions FROM (
       SELECT embedding_model, embedding_dims FROM knowledge_sources
        WHERE project_id = $1 AND chunk_count > 0 AND ($2::uuid IS NULL OR id <> $2::uuid)
       UNION ALL SELECT embedding_model, embedding_dims FROM insights WHERE project_id = $1
       UNION ALL SELECT embedding_model, embedding_dims FROM recommendations WHERE project_id = $1
     ) spaces ORDER BY 1, 2`,
    [projectId, exceptSourceId],
  );
  return rows.map((r) => ({ model: r.model, dimensions: r.dimensions }));
}

/**
 * @throws EmbeddingSpaceMismatchError when the project stores vectors of a space other than `incoming`.
 */
export async function assertEmbeddingSpace(
  manager: EntityManager,
  projectId: string,
  incoming: EmbeddingSpace,
  exceptSourceId: string | null,
): Promise<void> {
  const stored = await storedSpaces(manager, projectId, exceptSourceId);
  if (stored.some((s) => s.model !== incoming.model || s.dimensions !== incoming.dimensions)) {
    throw new EmbeddingSpaceMismatchError(projectId, stored, incoming);
  }
}
