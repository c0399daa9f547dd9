import { abstainRule, CHUNK_TOKEN_COUNTER_ID, type RetrievedItem, type RetrievedKind } from '@ask/ask-contracts';
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
  /** Knowledge chunks only: the trail of headings above the chunk, null under none. */
  section: string | null;
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
   * the project's text search configuration, GIN-indexed), best Okapi BM25 first
   * ({@link questionTerms}, {@link fullTextSql}), among rows of the same embedding space as
   * `embedding` (its length and `embeddingModel`). Each item's `legs.fulltext` holds its rank
   * (1 = best), its BM25 score and `coverage` (the idf-weighted share of the question's lexemes it
   * holds, in [0, 1]; a lexeme no row of the project holds counts its embedder's `absentWeight` times in
   * the share's denominator, {@link coverageDenominator}); `score` is its cosine similarity to `embedding`. Two statements: the question's
   * term statistics by primary key, then the ranking. A question with no word, or none left after the
   * configuration's stop words, matches nothing: the leg abstains. A chunk's title and section path
   * count as BM25F fields ({@link FieldWeights}; default {@link BM25F_FIELD_WEIGHTS}).
   * @throws RangeError for a bad top-K or a field weight that is not finite and ≥ 0.
   */
  async searchFullText(
    projectId: string,
    question: string,
    embedding: readonly number[],
    topK: number,
    embeddingModel: string,
    fieldWeights: FieldWeights = BM25F_FIELD_WEIGHTS,
  ): Promise<RetrievedItem[]> {
    assertTopK(topK);
    assertFieldWeights(fieldWeights);
    if (!isUuid(projectId)) return [];
    const terms = await questionTerms(this.dataSource, projectId, question);
    if (terms.lexemes.length === 0) return [];
    const rows = await pgQuery<ItemRow & { bm25: number; coverage: number }>(
      this.dataSource,
      fullTextSql(embedding.length),
      [
        projectId,
        vectorParam(embedding),
        topK,
        tsqueryOf(terms.lexemes),
        embeddingModel,
        terms.lexemes,
        terms.idf,
        terms.averageLength,
        coverageDenominator(terms, absentWeightOf(embeddingModel)),
        fieldWeights.title,
        fieldWeights.section,
      ],
    );
    return rows.map((r, i) => ({
      ...toItem(r),
      legs: { fulltext: { rank: i + 1, score: Number(r.bm25), coverage: Number(r.coverage) } },
    }));
  }

  /**
   * Both legs for one question, fused by a weighted convex combination of their normalised scores
   * (`fuseRankings`): the `topK` best of the vector leg's and the full-text leg's `fusionDepth(topK)`
   * candidates each (3 × top-K, 30..200), both under the same embedding-model filter; `fieldWeights`
   * as in {@link searchFullText}.
   * @throws RangeError for a bad top-K, embedding length or field weight.
   */
  async searchHybrid(
    projectId: string,
    question: string,
    embedding: readonly number[],
    topK: number,
    embeddingModel: string,
    weights: FusionWeights,
    fieldWeights: FieldWeights = BM25F_FIELD_WEIGHTS,
  ): Promise<RetrievedItem[]> {
    assertTopK(topK);
    assertFieldWeights(fieldWeights);
    const depth = fusionDepth(topK);
    const [byVector, byText] = await Promise.all([
      this.search(projectId, embedding, depth, embeddingModel),
      this.searchFullText(projectId, question, embedding, depth, embeddingModel, fieldWeights),
    ]);
    return fuseRankings(byVector, byText, weights, topK);
  }
}

/** At most this many distinct words of the question go into the full-text query. */
const MAX_QUERY_TERMS = 32;
/** Words longer than this are left out of the full-text query (no real word is; bounds the parse). */
const MAX_TERM_CHARACTERS = 50;

/**
 * BM25 term-frequency saturation k1 and length normalisation b of the full-text leg: Robertson and
 * Zaragoza's customary values ("The Probabilistic Relevance Framework: BM25 and Beyond", 2009: k1 in
 * 1.2..2, b = 0.75), Lucene's and Elasticsearch's defaults; kept after the fit corpora (the
 * PostgreSQL manual, redis-doc, the Rust book: bench/RESULTS.md, "Retrieval on the fit corpora").
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * BM25F field weights of the full-text leg: a knowledge chunk's `tsv` holds its page title (weight
 * A), its section path (weight B) and its text (weight D, counted 1), and a position of the question's
 * lexeme counts `title` times in the title, `section` times in the section path (migration
 * ChunkFields1796015482800). Insights and recommendations hold text only. Chosen by
 * bench/retrieval/fit-fields.ts on the fit corpora (the PostgreSQL manual, redis-doc, rust-book,
 * prometheus-docs, curl-docs) from the grid 1:1, 2:1, 2:2, 3:1, 3:2 (title:section): every pair fits the
 * same abstain threshold, and 3:1 has the best mean MRR under the lexical default weighting, 0.685
 * (bench/RESULTS.md, "BM25F field weights and the abstain rule").
 */
export interface FieldWeights {
  title: number;
  section: number;
}

/** The field weights in force ({@link FieldWeights}). */
export const BM25F_FIELD_WEIGHTS: Readonly<FieldWeights> = { title: 3, section: 1 };

/**
 * The question's distinct lower-cased words (runs of letters, marks and digits of any script), at
 * most 32 of at most 50 characters each, in order of first appearance: what both the full-text
 * query and BM25's lexemes are built from, so the work per question is bounded.
 */
export function fullTextTerms(question: string): string[] {
  const terms = new Set<string>();
  for (const match of question.toLowerCase().matchAll(/[\p{L}\p{M}\p{N}]+/gu)) {
    if (match[0].length > MAX_TERM_CHARACTERS) continue;
    terms.add(match[0]);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/**
 * The full-text query of a question: its {@link fullTextTerms} OR-ed in `to_tsquery` syntax
 * (`'how' | 'vacuum' | …`); the project's text search configuration then stems them and drops its
 * stop words. Empty when the question has no word.
 */
export function fullTextQuery(question: string): string {
  return fullTextTerms(question)
    .map((t) => `'${t}'`)
    .join(' | ');
}

/** The question's lexemes with their BM25 idf in the project, and the project's mean row length. */
export interface QuestionTerms {
  /** Distinct lexemes of the question under the project's text search configuration (at most 32). */
  lexemes: string[];
  /** idf of each lexeme, same order: ln(1 + (N − df + 0.5) / (df + 0.5)); df = 0 for one no row holds. */
  idf: number[];
  /** Same order: true for a lexeme no row of the project holds (df = 0, the largest idf). */
  absent: boolean[];
  /** Mean `length(tsv)` (distinct lexemes) of the project's full-text rows, at least 1. */
  averageLength: number;
}

/**
 * The question's {@link fullTextTerms} through the project's text search configuration in force
 * (`projects.text_search_config`, the one its rows are indexed with), each lexeme's document
 * frequency from `text_term_stats` and the project's row count and total length from
 * `text_corpus_stats`: one statement of at most 32 primary-key lookups, whatever the project's size
 * (the statistics are kept by triggers at every write, never counted over the rows at query time).
 * No lexeme for a question of stop words only, or for an unknown project.
 */
export async function questionTerms(ds: DataSource, projectId: string, question: string): Promise<QuestionTerms> {
  const words = fullTextTerms(question);
  if (words.length === 0) return { lexemes: [], idf: [], absent: [], averageLength: 1 };
  const rows = await pgQuery<{ lexeme: string; df: number; documents: number; total_length: string }>(
    ds,
    `SELECT l.lexeme, coalesce(t.df, 0) AS df, coalesce(c.documents, 0) AS documents,
            coalesce(c.total_length, 0) AS total_length
       FROM projects p
      CROSS JOIN LATERAL (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector(p.text_search_config::regconfig, $2)) u) l
       LEFT JOIN text_corpus_stats c ON c.project_id = p.id
       LEFT JOIN text_term_stats t ON t.project_id = p.id AND t.lexeme = l.lexeme
      WHERE p.id = $1
      ORDER BY l.lexeme`,
    [projectId, words.join(' ')],
    'ask-question-terms',
  );
  const documents = Number(rows[0]?.documents ?? 0);
  const total = Number(rows[0]?.total_length ?? 0);
  return {
    lexemes: rows.map((r) => r.lexeme),
    idf: rows.map((r) => Math.log(1 + (documents - Number(r.df) + 0.5) / (Number(r.df) + 0.5))),
    absent: rows.map((r) => Number(r.df) === 0),
    averageLength: Math.max(1, documents > 0 ? total / documents : 1),
  };
}

/**
 * The absent weight of the embedder that embedded the question (`provider/model`): its
 * `ABSTAIN_RULES` entry's `absentWeight`, 1 for a model without a rule.
 */
export function absentWeightOf(embeddingModel: string): number {
  return abstainRule(embeddingModel.slice(embeddingModel.indexOf('/') + 1))?.absentWeight ?? 1;
}

/**
 * The denominator of the full-text `coverage`: Σ idf + (absentWeight − 1) · Σ idf of the lexemes no row
 * of the project holds, so coverage = Σ held idf / (Σ idf + (absentWeight − 1) · Σ absent idf), in
 * [0, 1] for absentWeight ≥ 1 (a question naming what the project never holds scores lower).
 * @throws RangeError for an absent weight that is not finite and ≥ 1.
 */
export function coverageDenominator(terms: Pick<QuestionTerms, 'idf' | 'absent'>, absentWeight: number): number {
  if (!Number.isFinite(absentWeight) || absentWeight < 1)
    throw new RangeError(`absent weight must be finite and >= 1, got ${absentWeight}`);
  return terms.idf.reduce((sum, x, i) => sum + x * (terms.absent[i] ? absentWeight : 1), 0);
}

/** A tsquery OR-ing lexemes as they are (`'vacuum' | 'tabl'`), quoted for the tsquery parser. */
export function tsqueryOf(lexemes: readonly string[]): string {
  return lexemes.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ');
}

/** Knowledge chunks of equal score in their page's uri order, then their place in the page. */
const KNOWLEDGE_TIE_BREAK = {
  join: ' JOIN knowledge_sources ts ON ts.id = k.source_id',
  order: 'ts.uri, k.ordinal, k.id',
};

/**
 * The BM25-scored rows of one table matching the question, as a FROM item of ids and scores only
 * (text and distance are read for the top-K afterwards): `alias` rows of the project and embedding
 * space whose `tsv` matches $4 (the GIN index on (project_id, tsv)), with `bm25` and `coverage`.
 * A lexeme's term frequency (BM25F) is the sum over its positions in `tsv` of their field's weight:
 * $10 for a title position (weight A), $11 for a section path's (B), 1 for the text's (D), read for
 * the question's lexemes only; a lexeme in any field counts for `coverage`. `length(tsv)` (distinct
 * lexemes of every field) is the row's length, as the statistics count it.
 */
function bm25Rows(
  table: string,
  alias: string,
  dimensions: number,
  tieBreak: { join: string; order: string } = { join: '', order: `${alias}.id` },
): string {
  return `(SELECT ${alias}.id, s.bm25, s.coverage
         FROM ${table} ${alias}${tieBreak.join}
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(($7::float8[])[array_position($6::text[], u.lexeme)] * u.tf * ${BM25_K1 + 1}
                              / (u.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * length(${alias}.tsv) / $8::float8))), 0) AS bm25,
                 coalesce(sum(($7::float8[])[array_position($6::text[], u.lexeme)]), 0) / $9::float8 AS coverage
            FROM (SELECT f.lexeme,
                         (SELECT coalesce(sum(CASE w WHEN 'A' THEN $10::float8 WHEN 'B' THEN $11::float8 ELSE 1 END), 1)
                            FROM unnest(f.weights) w) AS tf
                    FROM unnest(${alias}.tsv) f WHERE f.lexeme = ANY ($6::text[])) u) s
        WHERE ${alias}.project_id = $1 AND ${alias}.embedding_dims = ${dimensions} AND ${alias}.embedding_model = $5
          AND ${alias}.tsv @@ (SELECT $4::tsquery)
        ORDER BY s.bm25 DESC, ${tieBreak.order} LIMIT $3)`;
}

/**
 * The full-text SQL over rows of embedding length `dimensions` ($1 project id, $2 query vector,
 * $3 top-K, $4 the tsquery of the question's lexemes, $5 the embedding model `provider/model`,
 * $6 the lexemes `text[]`, $7 their idf `float8[]`, $8 the project's mean row length, $9 the coverage's
 * denominator ({@link coverageDenominator}): {@link questionTerms}; $10 and $11 the title and section field weights, {@link FieldWeights}).
 * Rows are ranked by Okapi BM25 (BM25F: tf weighted by field),
 * Σ idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)) with Lucene's non-negative idf, best
 * first, top-K per table then overall, and carry `coverage`: the idf-weighted share of the question's
 * lexemes the row holds (a lexeme no row holds counts with df = 0, weighted by $9), in [0, 1], and their cosine
 * distance to $2, so every item carries the same `score` as in the vector leg. A chunk's text and
 * distance are read for the top-K only. Exported so a test can EXPLAIN it and see the GIN indexes used.
 */
export function fullTextSql(dimensions: number): string {
  const e = (alias: string) => embeddingExpression(`${alias}.embedding`, dimensions);
  const q = isIndexedDimension(dimensions) ? `$2::vector(${dimensions})` : '$2::vector';
  return `
    SELECT * FROM (
      (SELECT i.id, 'insight' AS kind, i.name AS title, i.name || E'\\n' || i.description AS text,
              NULL::text AS source, NULL::text AS section, NULL::int AS token_count, b.bm25, b.coverage,
              ${e('i')} <=> ${q} AS distance, NULL::int AS ordinal
         FROM ${bm25Rows('insights', 'i', dimensions)} b JOIN insights i ON i.id = b.id)
      UNION ALL
      (SELECT r.id, 'recommendation', r.title, r.title || E'\\n' || r.body, NULL::text, NULL::text, NULL::int,
              b.bm25, b.coverage, ${e('r')} <=> ${q}, NULL::int
         FROM ${bm25Rows('recommendations', 'r', dimensions)} b JOIN recommendations r ON r.id = b.id)
      UNION ALL
      (SELECT k.id, 'knowledge', s.title, k.text, s.uri, k.section, k.token_count, b.bm25, b.coverage,
              ${e('k')} <=> ${q}, k.ordinal
         FROM ${bm25Rows('knowledge_chunks', 'k', dimensions, KNOWLEDGE_TIE_BREAK)} b
         JOIN knowledge_chunks k ON k.id = b.id
         JOIN knowledge_sources s ON s.id = k.source_id)
    ) ranked
    -- Equal scores in a stable order (a page's uri, then the chunk's place in it), not by random ids, so
    -- the same question over the same rows always returns the same top-K.
    ORDER BY bm25 DESC, kind, source, ordinal, id
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
    ? `(SELECT c.id, 'knowledge', s.title, t.text, s.uri, t.section, c.token_count, c.distance
         FROM (SELECT k.id, k.source_id, k.token_count, ${e('k')} <=> ${q} AS distance
                 FROM knowledge_chunks k
                WHERE k.project_id = $1 AND k.embedding_dims = ${dimensions} AND k.embedding_model = $4${small}
                ORDER BY ${e('k')} <=> ${q} LIMIT $3) c
         JOIN knowledge_chunks t ON t.id = c.id
         JOIN knowledge_sources s ON s.id = c.source_id)`
    : `(SELECT c.id, 'knowledge', s.title, c.text, s.uri, c.section, c.token_count, c.distance
         FROM (SELECT k.id, k.source_id, k.text, k.section, k.token_count, ${e('k')} <=> ${q} AS distance
                 FROM knowledge_chunks k
                WHERE k.project_id = $1 AND k.embedding_dims = ${dimensions} AND k.embedding_model = $4
                ORDER BY ${e('k')} <=> ${q} LIMIT $3) c
         JOIN knowledge_sources s ON s.id = c.source_id)`;
  return `${withSmall}
    SELECT * FROM (
      (SELECT i.id, 'insight' AS kind, i.name AS title, i.name || E'\\n' || i.description AS text,
              NULL::text AS source, NULL::text AS section, NULL::int AS token_count, ${e('i')} <=> ${q} AS distance
         FROM insights i
        WHERE i.project_id = $1 AND i.embedding_dims = ${dimensions} AND i.embedding_model = $4${small}
        ORDER BY ${e('i')} <=> ${q} LIMIT $3)
      UNION ALL
      (SELECT r.id, 'recommendation', r.title, r.title || E'\\n' || r.body, NULL::text, NULL::text, NULL::int,
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

function assertFieldWeights(w: FieldWeights): void {
  for (const [field, value] of Object.entries(w)) {
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`${field} field weight must be finite and ≥ 0, got ${value}`);
  }
}

function assertTopK(topK: number): void {
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) {
    throw new RangeError(`topK must be an integer in 1..${MAX_TOP_K}, got ${topK}`);
  }
}

function toItem(r: ItemRow): RetrievedItem {
  const item: RetrievedItem = { id: r.id, kind: r.kind, title: r.title, text: r.text, score: 1 - Number(r.distance) };
  if (r.source !== null) item.source = r.source;
  if (r.section !== null && r.section !== undefined) item.section = r.section;
  if (r.token_count !== null) item.tokenCounts = { [CHUNK_TOKEN_COUNTER_ID]: Number(r.token_count) };
  return item;
}
