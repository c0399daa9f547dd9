import { CHUNK_TOKEN_COUNTER_ID, type RetrievedItem, type RetrievedKind } from '@ask/ask-contracts';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '../ids';
import { embeddingExpression, isIndexedDimension, vectorParam } from '../vector';

/** Largest top-K a search accepts. */
export const MAX_TOP_K = 200;

interface ItemRow {
  id: string;
  kind: RetrievedKind;
  title: string;
  text: string;
  source: string | null;
  /** Knowledge chunks only: o200k_base tokens counted at ingestion. */
  token_count: number | null;
  distance: number;
}

/**
 * Ranked retrieval over a project's insights, recommendations and knowledge chunks by pgvector
 * cosine distance.
 *
 * Each table is searched with `ORDER BY (embedding::vector(N)) <=> $q LIMIT k` under
 * `WHERE embedding_dims = N`, the same expression and predicate as the partial HNSW indexes of the
 * migration `EmbeddingHnswIndexes`, so the planner can use them; the three top-k lists are merged
 * and cut to k. The search runs in a transaction with `hnsw.iterative_scan = strict_order`
 * (pgvector ≥ 0.8), so filtering by project after the index scan still fills k rows in exact
 * distance order, and `hnsw.ef_search` at least 2k.
 */
@Injectable()
export class RetrievalRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The project's `topK` items nearest to `embedding`, best first, with `score` = 1 − cosine
   * distance (in [−1, 1]). Only vectors of the same length as `embedding` are compared; rows of the
   * project embedded at another length are never returned (the ingestion guard keeps a project on
   * one embedding space). Never returns another project's rows.
   * @param embedding the question's embedding (its length selects the index).
   * @param topK 1..200.
   * @throws RangeError for a bad top-K or embedding length; Error for a non-finite component.
   */
  async search(projectId: string, embedding: readonly number[], topK: number): Promise<RetrievedItem[]> {
    if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) {
      throw new RangeError(`topK must be an integer in 1..${MAX_TOP_K}, got ${topK}`);
    }
    if (!isUuid(projectId)) return [];
    const sql = searchSql(embedding.length);
    const params = [projectId, vectorParam(embedding), topK];
    const rows: ItemRow[] = await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT set_config('hnsw.iterative_scan', 'strict_order', true), set_config('hnsw.ef_search', $1, true)`, [
        String(Math.min(1000, Math.max(40, 2 * topK))),
      ]);
      return manager.query(sql, params);
    });
    return rows.map((r) => {
      const item: RetrievedItem = { id: r.id, kind: r.kind, title: r.title, text: r.text, score: 1 - Number(r.distance) };
      if (r.source !== null) item.source = r.source;
      if (r.token_count !== null) item.tokenCounts = { [CHUNK_TOKEN_COUNTER_ID]: Number(r.token_count) };
      return item;
    });
  }
}

/**
 * The search SQL for vectors of `dimensions` ($1 project id, $2 query vector, $3 top-K). Exported
 * so a test can EXPLAIN it and see the HNSW indexes used.
 */
export function searchSql(dimensions: number): string {
  const e = (alias: string) => embeddingExpression(`${alias}.embedding`, dimensions);
  const q = isIndexedDimension(dimensions) ? `$2::vector(${dimensions})` : '$2::vector';
  return `
    SELECT * FROM (
      (SELECT i.id, 'insight' AS kind, i.name AS title, i.name || E'\\n' || i.description AS text,
              NULL::text AS source, NULL::int AS token_count, ${e('i')} <=> ${q} AS distance
         FROM insights i
        WHERE i.project_id = $1 AND i.embedding_dims = ${dimensions}
        ORDER BY ${e('i')} <=> ${q} LIMIT $3)
      UNION ALL
      (SELECT r.id, 'recommendation', r.title, r.title || E'\\n' || r.body, NULL::text, NULL::int,
              ${e('r')} <=> ${q}
         FROM recommendations r
        WHERE r.project_id = $1 AND r.embedding_dims = ${dimensions}
        ORDER BY ${e('r')} <=> ${q} LIMIT $3)
      UNION ALL
      (SELECT c.id, 'knowledge', s.title, c.text, s.uri, c.token_count, c.distance
         FROM (SELECT k.id, k.source_id, k.text, k.token_count, ${e('k')} <=> ${q} AS distance
                 FROM knowledge_chunks k
                WHERE k.project_id = $1 AND k.embedding_dims = ${dimensions}
                ORDER BY ${e('k')} <=> ${q} LIMIT $3) c
         JOIN knowledge_sources s ON s.id = c.source_id)
    ) ranked
    ORDER BY distance, kind, id
    LIMIT $3`;
}
