import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '../ids';
import { assertDimensions, vectorParam } from '../vector';
import { assertEmbeddingSpace } from './knowledge.repository';
import type { EmbeddingSpace } from '../errors';

/** An insight to upsert, with the embedding of its text. */
export interface InsightInput {
  /** The project's own id for it; the upsert key. */
  externalId: string;
  name: string;
  description: string;
  /** SHA-256 (hex) of the embedded text. */
  contentHash: string;
  embedding: readonly number[];
}

/** A recommendation to upsert, with the embedding of its text. */
export interface RecommendationInput {
  externalId: string;
  title: string;
  body: string;
  contentHash: string;
  embedding: readonly number[];
}

/** Which table an upsert writes. */
export type InsightKind = 'insight' | 'recommendation';

const TABLES = {
  insight: { table: 'insights', first: 'name', second: 'description' },
  recommendation: { table: 'recommendations', first: 'title', second: 'body' },
} as const;

/** Insights and recommendations of a project, upserted by external id. */
@Injectable()
export class InsightsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Inserts or updates insights by (project, external id) in one transaction.
   * @param embeddingModel `provider/model` that produced the embeddings.
   * @returns how many rows were written.
   * @throws EmbeddingSpaceMismatchError when the project stores vectors of another model or length;
   *   RangeError when the embeddings differ in length.
   */
  upsertInsights(projectId: string, items: readonly InsightInput[], embeddingModel: string): Promise<number> {
    return this.upsert(
      'insight',
      projectId,
      items.map((i) => ({
        externalId: i.externalId,
        first: i.name,
        second: i.description,
        contentHash: i.contentHash,
        embedding: i.embedding,
      })),
      embeddingModel,
    );
  }

  /** Same as {@link upsertInsights}, for recommendations. */
  upsertRecommendations(
    projectId: string,
    items: readonly RecommendationInput[],
    embeddingModel: string,
  ): Promise<number> {
    return this.upsert(
      'recommendation',
      projectId,
      items.map((i) => ({
        externalId: i.externalId,
        first: i.title,
        second: i.body,
        contentHash: i.contentHash,
        embedding: i.embedding,
      })),
      embeddingModel,
    );
  }

  /**
   * Content hashes of the project's stored items of `kind` by external id, so unchanged items are
   * not re-embedded.
   */
  async contentHashes(projectId: string, kind: InsightKind): Promise<Map<string, string>> {
    if (!isUuid(projectId)) return new Map();
    const rows: Array<{ external_id: string; content_hash: string }> = await this.dataSource.query(
      `SELECT external_id, content_hash FROM ${TABLES[kind].table} WHERE project_id = $1`,
      [projectId],
    );
    return new Map(rows.map((r) => [r.external_id, r.content_hash]));
  }

  /**
   * Deletes the project's items of `kind` whose external id is not in `keepExternalIds`.
   * @returns how many were deleted.
   */
  async deleteMissing(projectId: string, kind: InsightKind, keepExternalIds: readonly string[]): Promise<number> {
    if (!isUuid(projectId)) return 0;
    const [, affected] = await this.dataSource.query(
      `DELETE FROM ${TABLES[kind].table} WHERE project_id = $1 AND NOT (external_id = ANY($2::text[]))`,
      [projectId, keepExternalIds],
    );
    return affected;
  }

  /**
   * The project's items of `kind` whose vectors are NOT of `space` (a changed embedding model), oldest
   * first, at most `limit`: what a re-embed still has to rebuild. `text` is what ingestion embeds
   * (`name\ndescription`, `title\nbody`).
   */
  async itemsOutsideSpace(
    projectId: string,
    kind: InsightKind,
    space: EmbeddingSpace,
    limit: number,
  ): Promise<Array<{ id: string; text: string }>> {
    if (!isUuid(projectId)) return [];
    const { table, first, second } = TABLES[kind];
    const rows: Array<{ id: string; text: string }> = await this.dataSource.query(
      `SELECT id, ${first} || E'\\n' || ${second} AS text FROM ${table}
        WHERE project_id = $1 AND (embedding_model <> $2 OR embedding_dims <> $3)
        ORDER BY created_at, id LIMIT $4`,
      [projectId, space.model, space.dimensions, limit],
    );
    return rows;
  }

  /** How many of the project's items of `kind` are outside `space` (see {@link itemsOutsideSpace}). */
  async countOutsideSpace(projectId: string, kind: InsightKind, space: EmbeddingSpace): Promise<number> {
    if (!isUuid(projectId)) return 0;
    const [row] = await this.dataSource.query(
      `SELECT count(*)::int AS n FROM ${TABLES[kind].table} WHERE project_id = $1 AND (embedding_model <> $2 OR embedding_dims <> $3)`,
      [projectId, space.model, space.dimensions],
    );
    return row.n;
  }

  /**
   * Moves items into `space`: sets each one's vector, length, model and content hash (re-embed). No
   * embedding-space check: the point is to leave the old space.
   * @returns how many rows were written.
   */
  async reembedItems(
    projectId: string,
    kind: InsightKind,
    items: ReadonlyArray<{ id: string; contentHash: string; embedding: readonly number[] }>,
    space: EmbeddingSpace,
  ): Promise<number> {
    if (items.length === 0 || !isUuid(projectId)) return 0;
    assertDimensions(space.dimensions);
    for (const item of items) {
      if (item.embedding.length !== space.dimensions)
        throw new RangeError(`embedding of ${item.embedding.length} numbers, expected ${space.dimensions}`);
    }
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`knowledge:${projectId}`]);
      const [, affected] = await manager.query(
        `UPDATE ${TABLES[kind].table} t SET embedding = x.embedding::vector, embedding_dims = $2, embedding_model = $3,
                content_hash = x.content_hash, updated_at = now()
           FROM unnest($4::uuid[], $5::text[], $6::text[]) AS x(id, content_hash, embedding)
          WHERE t.id = x.id AND t.project_id = $1`,
        [
          projectId,
          space.dimensions,
          space.model,
          items.map((i) => i.id),
          items.map((i) => i.contentHash),
          items.map((i) => vectorParam(i.embedding)),
        ],
      );
      return affected;
    });
  }

  private async upsert(
    kind: InsightKind,
    projectId: string,
    items: ReadonlyArray<{
      externalId: string;
      first: string;
      second: string;
      contentHash: string;
      embedding: readonly number[];
    }>,
    embeddingModel: string,
  ): Promise<number> {
    if (items.length === 0) return 0;
    const dimensions = items[0].embedding.length;
    assertDimensions(dimensions);
    for (const item of items) {
      if (item.embedding.length !== dimensions) {
        throw new RangeError(`embeddings differ in length: ${item.embedding.length} vs ${dimensions}`);
      }
    }
    const { table, first, second } = TABLES[kind];
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`knowledge:${projectId}`]);
      await assertEmbeddingSpace(manager, projectId, { model: embeddingModel, dimensions }, null);
      const rows = await manager.query(
        `INSERT INTO ${table} (project_id, external_id, ${first}, ${second}, content_hash, embedding, embedding_dims, embedding_model)
         SELECT $1, x.external_id, x.first, x.second, x.content_hash, x.embedding::vector, $2, $3
           FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
                AS x(external_id, first, second, content_hash, embedding)
         ON CONFLICT (project_id, external_id) DO UPDATE SET
           ${first} = EXCLUDED.${first}, ${second} = EXCLUDED.${second}, content_hash = EXCLUDED.content_hash,
           embedding = EXCLUDED.embedding, embedding_dims = EXCLUDED.embedding_dims,
           embedding_model = EXCLUDED.embedding_model, updated_at = now()
         RETURNING id`,
        [
          projectId,
          dimensions,
          embeddingModel,
          items.map((i) => i.externalId),
          items.map((i) => i.first),
          items.map((i) => i.second),
          items.map((i) => i.contentHash),
          items.map((i) => vectorParam(i.embedding)),
        ],
      );
      return rows.length;
    });
  }
}
