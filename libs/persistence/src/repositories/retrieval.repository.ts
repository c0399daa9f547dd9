import { CHUNK_TOKEN_COUNTER_ID, type RetrievedItem, type RetrievedKind } from '@ask/ask-contracts';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '../ids';
import { pgQuery } from '../pg-query';
import { assertDimensions, embeddingExpression, isIndexedDimension, vectorParam } from '../vector';
import { type FusionWeights, fuseRankings, fusionDepth } from './fuse-rankings';

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
 * A project of at most EXACT_SCAN_MAX_ROWS rows is ranked exactly, in one statement ordering by the
 * bare column (no HNSW index matches it). A larger one is searched with
 * `ORDER BY (embedding::vector(N)) <=> $q LIMIT k` under `WHERE embedding_dims = N`, the same
 * expression and predicate as the partial HNSW indexes of the migration `EmbeddingHnswIndexes`, so
 * the planner can use them, in a transaction with `hnsw.iterative_scan = strict_order`
 * (pgvector ≥ 0.8), so filtering by project after the index scan still fills k rows in exact
 * distance order, and `hnsw.ef_search` at least 2k. The three top-k lists are merged and cut to k.
 */
/**
 * Projects with at most this many rows (chunks + insights + recommendations) are ranked by an exact
 * scan of their own rows instead of the shared HNSW index. Why: a small project holds a small share of
 * the shared graph, so the tenant filter, applied after the index, discards most of what the scan
 * visits and recall falls, while an exact scan of a small project is exact and its cost grows linearly
 * with the project's rows. Such a project costs one round trip (no transaction, no planner settings).
 * Recall and latency on both sides of the cutoff: bench/retrieval/scale.bench.ts, bench/RESULTS.md
 * "Vector search at 100K chunks".
 */
export const EXACT_SCAN_MAX_ROWS = 10_000;

/**
 * The pgvector settings of a search through the HNSW index (a project above EXACT_SCAN_MAX_ROWS) for
 * `topK`: `hnsw.ef_search` = 2 × top-K within 40..1000, and `hnsw.iterative_scan` so the tenant filter,
 * applied after the index, still fills top-K rows.
 */
export function hnswSettings(topK: number): { efSearch: number; iterative: 'strict_order' | 'relaxed_order' } {
  return { efSearch: Math.min(1000, Math.max(40, 2 * topK)), iterative: 'strict_order' };
}

/** The project's rows (chunks + insights + recommendations), $1 = project id: one scalar subquery. */
const PROJECT_ROWS_SQL = `(SELECT (SELECT coalesce(sum(chunk_count), 0) FROM knowledge_sources WHERE project_id = $1)
       + (SELECT count(*) FROM insights WHERE project_id = $1)
       + (SELECT count(*) FROM recommendations WHERE project_id = $1))`;

@Injectable()
export class RetrievalRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The project's `topK` items nearest to `embedding`, best first, with `score` = 1 − cosine
   * distance (in [−1, 1]). Only vectors of the same embedding space are compared: the same length as
   * `embedding` AND the same `embeddingModel`, so rows embedded by another model (a project whose
   * model changed and is not re-embedded yet) are never ranked against this query, whatever their
   * length. Never returns another project's rows. A project of at most 10,000 rows
   * ({@link EXACT_SCAN_MAX_ROWS}) is ranked exactly from its own rows; a larger one through the
   * partial HNSW index of the embedding's length with iterative scans.
   * @param embedding the question's embedding (its length selects the index).
   * @param topK 1..200.
   * @param embeddingModel `provider/model` that embedded the question (as ingestion stores it).
   * @throws RangeError for a bad top-K or embedding length; Error for a non-finite component.
   */
  async search(
    projectId: string,
    embedding: readonly number[],
    topK: number,
    embeddingModel: string,
  ): Promise<RetrievedItem[]> {
    assertTopK(topK);
    if (!isUuid(projectId)) return [];
    const params = [projectId, vectorParam(embedding), topK, embeddingModel];
    // A small project is ranked exactly from its own rows in one statement (the project_id indexes,
    // bitmap scans, no transaction): an HNSW graph shared by every project would visit mostly other
    // projects' rows first. The statement returns nothing for a project above EXACT_SCAN_MAX_ROWS.
    // Unnamed (its plan depends on the vector and the project's size), on the pool without TypeORM.
    const exact = await pgQuery<ItemRow>(this.dataSource, searchSql(embedding.length, 'exact'), params);
    if (exact.length > 0) return exact.map(toItem);
    const [{ rows: projectRows }] = await this.dataSource.query(`SELECT ${PROJECT_ROWS_SQL} AS rows`, [projectId]);
    if (Number(projectRows) <= EXACT_SCAN_MAX_ROWS) return [];
    const { efSearch, iterative } = hnswSettings(topK);
    const rows: ItemRow[] = await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `SELECT set_config('hnsw.iterative_scan', $1, true), set_config('hnsw.ef_search', $2, true)`,
        [iterative, String(efSearch)],
      );
      return manager.query(searchSql(embedding.length), params);
    });
    return rows.map(toItem);
  }

  /**
   * The project's `topK` items whose text matches the question's words (PostgreSQL full text with
   * the project's text search configuration, GIN-indexed), best `ts_rank_cd` first, among rows of
   * the same embedding space as `embedding` (its length and `embeddingModel`); each item's `legs.fulltext` holds its rank (1 = best)
   * and `ts_rank_cd`, and `score` its cosine similarity to `embedding`. A question with no word, or
   * none left after the configuration's stop words, matches nothing: the leg abstains.
   * @throws RangeError for a bad top-K.
   */
  async searchFullText(
    projectId: string,
    question: string,
    embedding: readonly number[],
    topK: number,
    embeddingModel: string,
  ): Promise<RetrievedItem[]> {
    assertTopK(topK);
    const query = fullTextQuery(question);
    if (!isUuid(projectId) || query === '') return [];
    const rows: Array<ItemRow & { rank: number }> = await this.dataSource.query(fullTextSql(embedding.length), [
      projectId,
      vectorParam(embedding),
      topK,
      query,
      embeddingModel,
    ]);
    return rows.map((r, i) => ({ ...toItem(r), legs: { fulltext: { rank: i + 1, score: Number(r.rank) } } }));
  }

  /**
   * Both legs for one question, fused by a weighted convex combination of their normalised scores
   * (`fuseRankings`): the `topK` best of the vector leg's and the full-text leg's `fusionDepth(topK)`
   * candidates each (3 × top-K, 30..200), both under the same embedding-model filter.
   * @throws RangeError for a bad top-K or embedding length.
   */
  async searchHybrid(
    projectId: string,
    question: string,
    embedding: readonly number[],
    topK: number,
    embeddingModel: string,
    weights: FusionWeights,
  ): Promise<RetrievedItem[]> {
    assertTopK(topK);
    const depth = fusionDepth(topK);
    const [byVector, byText] = await Promise.all([
      this.search(projectId, embedding, depth, embeddingModel),
      this.searchFullText(projectId, question, embedding, depth, embeddingModel),
    ]);
    return fuseRankings(byVector, byText, weights, topK);
  }
}

/** At most this many distinct words of the question go into the full-text query. */
const MAX_QUERY_TERMS = 32;
/** Words longer than this are left out of the full-text query (no real word is; bounds the parse). */
const MAX_TERM_CHARACTERS = 50;

/**
 * The full-text query of a question: its distinct lower-cased words (runs of letters, marks and
 * digits of any script), at most 32 of at most 50 characters each, OR-ed in `to_tsquery` syntax
 * (`'how' | 'vacuum' | …`); the project's text search configuration then stems them and drops its
 * stop words. Empty when the question has no word.
 */
export function fullTextQuery(question: string): string {
  const terms = new Set<string>();
  for (const match of question.toLowerCase().matchAll(/[\p{L}\p{M}\p{N}]+/gu)) {
    if (match[0].length > MAX_TERM_CHARACTERS) continue;
    terms.add(match[0]);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms].map((t) => `'${t}'`).join(' | ');
}

/**
 * The full-text SQL over rows of embedding length `dimensions` ($1 project id, $2 query vector,
 * $3 top-K, $4 `fullTextQuery`, $5 the embedding model `provider/model`): each table's rows whose `tsv` matches the query under the
 * project's text search configuration in force (`projects.text_search_config`, the one its rows are
 * indexed with), best `ts_rank_cd` first, with their cosine distance to $2
 * so every item carries the same `score` as in the vector leg. Exported so a test can EXPLAIN it
 * and see the GIN indexes used.
 */
export function fullTextSql(dimensions: number): string {
  const e = (alias: string) => embeddingExpression(`${alias}.embedding`, dimensions);
  const q = isIndexedDimension(dimensions) ? `$2::vector(${dimensions})` : '$2::vector';
  // A scalar subquery (one InitPlan value) rather than a joined CTE, so `tsv @@ …` can drive the GIN index.
  // The project's configuration in force, the one its rows' tsv are built with (applyTextSearchConfig).
  const tsquery = `(SELECT to_tsquery(p.text_search_config::regconfig, $4) FROM projects p WHERE p.id = $1)`;
  return `
    SELECT * FROM (
      (SELECT i.id, 'insight' AS kind, i.name AS title, i.name || E'\\n' || i.description AS text,
              NULL::text AS source, NULL::int AS token_count, ts_rank_cd(i.tsv, ${tsquery}) AS rank,
              ${e('i')} <=> ${q} AS distance, NULL::int AS ordinal
         FROM insights i
        WHERE i.project_id = $1 AND i.embedding_dims = ${dimensions} AND i.embedding_model = $5 AND i.tsv @@ ${tsquery}
        ORDER BY rank DESC, i.id LIMIT $3)
      UNION ALL
      (SELECT r.id, 'recommendation', r.title, r.title || E'\\n' || r.body, NULL::text, NULL::int,
              ts_rank_cd(r.tsv, ${tsquery}), ${e('r')} <=> ${q}, NULL::int
         FROM recommendations r
        WHERE r.project_id = $1 AND r.embedding_dims = ${dimensions} AND r.embedding_model = $5 AND r.tsv @@ ${tsquery}
        ORDER BY 7 DESC, r.id LIMIT $3)
      UNION ALL
      (SELECT k.id, 'knowledge', s.title, k.text, s.uri, k.token_count, ts_rank_cd(k.tsv, ${tsquery}),
              ${e('k')} <=> ${q}, k.ordinal
         FROM knowledge_chunks k
         JOIN knowledge_sources s ON s.id = k.source_id
        WHERE k.project_id = $1 AND k.embedding_dims = ${dimensions} AND k.embedding_model = $5 AND k.tsv @@ ${tsquery}
        ORDER BY 7 DESC, s.uri, k.ordinal LIMIT $3)
    ) ranked
    -- Equal ranks in a stable order (a page's uri, then the chunk's place in it), not by random ids, so
    -- the same question over the same rows always returns the same top-K.
    ORDER BY rank DESC, kind, source, ordinal, id
    LIMIT $3`;
}

/**
 * The search SQL for vectors of `dimensions` ($1 project id, $2 query vector, $3 top-K, $4 the
 * embedding model `provider/model`). `index` (default) orders by the partial HNSW indexes'
 * expression (`embedding::vector(N)`), so the planner can use them; `exact` orders by the bare
 * column, which no HNSW index matches, so the rows are found through the project_id indexes and
 * ranked exactly, and returns nothing when the project holds more than {@link EXACT_SCAN_MAX_ROWS}
 * rows. In `exact` the project's size is counted once (a materialized CTE, not one InitPlan per
 * table) and a chunk's text is read only for the top-K (joined back by id), not carried through the
 * sort for every row of the project. Exported so a test can EXPLAIN it and see which indexes are used.
 */
export function searchSql(dimensions: number, mode: 'index' | 'exact' = 'index'): string {
  assertDimensions(dimensions);
  const e = (alias: string) =>
    mode === 'exact' ? `${alias}.embedding` : embeddingExpression(`${alias}.embedding`, dimensions);
  const q = mode === 'index' && isIndexedDimension(dimensions) ? `$2::vector(${dimensions})` : '$2::vector';
  const exact = mode === 'exact';
  // The size check once for the three tables; `small` is a one-row CTE, evaluated on first use.
  const withSmall = exact
    ? `WITH small AS MATERIALIZED (SELECT ${PROJECT_ROWS_SQL} <= ${EXACT_SCAN_MAX_ROWS} AS ok)`
    : '';
  const small = exact ? ' AND (SELECT ok FROM small)' : '';
  // An exact scan sorts every row of the project: it carries the chunk's id, not its text, which is
  // read for the top-K only.
  const knowledge = exact
    ? `(SELECT c.id, 'knowledge', s.title, t.text, s.uri, c.token_count, c.distance
         FROM (SELECT k.id, k.source_id, k.token_count, ${e('k')} <=> ${q} AS distance
                 FROM knowledge_chunks k
                WHERE k.project_id = $1 AND k.embedding_dims = ${dimensions} AND k.embedding_model = $4${small}
                ORDER BY ${e('k')} <=> ${q} LIMIT $3) c
         JOIN knowledge_chunks t ON t.id = c.id
         JOIN knowledge_sources s ON s.id = c.source_id)`
    : `(SELECT c.id, 'knowledge', s.title, c.text, s.uri, c.token_count, c.distance
         FROM (SELECT k.id, k.source_id, k.text, k.token_count, ${e('k')} <=> ${q} AS distance
                 FROM knowledge_chunks k
                WHERE k.project_id = $1 AND k.embedding_dims = ${dimensions} AND k.embedding_model = $4
                ORDER BY ${e('k')} <=> ${q} LIMIT $3) c
         JOIN knowledge_sources s ON s.id = c.source_id)`;
  return `${withSmall}
    SELECT * FROM (
      (SELECT i.id, 'insight' AS kind, i.name AS title, i.name || E'\\n' || i.description AS text,
              NULL::text AS source, NULL::int AS token_count, ${e('i')} <=> ${q} AS distance
         FROM insights i
        WHERE i.project_id = $1 AND i.embedding_dims = ${dimensions} AND i.embedding_model = $4${small}
        ORDER BY ${e('i')} <=> ${q} LIMIT $3)
      UNION ALL
      (SELECT r.id, 'recommendation', r.title, r.title || E'\\n' || r.body, NULL::text, NULL::int,
              ${e('r')} <=> ${q}
         FROM recommendations r
        WHERE r.project_id = $1 AND r.embedding_dims = ${dimensions} AND r.embedding_model = $4${small}
        ORDER BY ${e('r')} <=> ${q} LIMIT $3)
      UNION ALL
      ${knowledge}
    ) ranked
    ORDER BY distance, kind, id
    LIMIT $3`;
}

function assertTopK(topK: number): void {
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) {
    throw new RangeError(`topK must be an integer in 1..${MAX_TOP_K}, got ${topK}`);
  }
}

function toItem(r: ItemRow): RetrievedItem {
  const item: RetrievedItem = { id: r.id, kind: r.kind, title: r.title, text: r.text, score: 1 - Number(r.distance) };
  if (r.source !== null) item.source = r.source;
  if (r.token_count !== null) item.tokenCounts = { [CHUNK_TOKEN_COUNTER_ID]: Number(r.token_count) };
  return item;
}
