import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Characters of a chunk's page title and section path its `tsv` indexes at most (bounds the work per row). */
export const TSV_TITLE_CHARS = 200;
export const TSV_SECTION_CHARS = 300;

/** The search vector of a knowledge chunk: the page title (weight A), the section path (B), the text (D). */
export const CHUNK_TSV_EXPRESSION =
  `setweight(to_tsvector(ts_config, left(coalesce(title, ''), ${TSV_TITLE_CHARS})), 'A')` +
  ` || setweight(to_tsvector(ts_config, left(coalesce(section, ''), ${TSV_SECTION_CHARS})), 'B')` +
  ` || to_tsvector(ts_config, text)`;

/** The search vector of a knowledge chunk before this migration: its text only. */
const TEXT_ONLY_TSV = 'to_tsvector(ts_config, text)';

/**
 * Fields of a knowledge chunk for the full-text leg (BM25F, `RetrievalRepository.searchFullText`):
 *
 * - `knowledge_chunks.title`: its page's title (the knowledge source's, copied at insert so the
 *   generated column can read it; backfilled from the sources here).
 * - `knowledge_chunks.section`: the trail of Markdown headings above the chunk (`Storage > Configuring
 *   retention`, ingestion's `chunkSectionPaths`); null under no heading and for rows written before
 *   this migration (their page is not re-chunked here).
 * - `tsv` is regenerated as `setweight(title, 'A') || setweight(section, 'B') || text` (weight D), title
 *   and section capped at 200 and 300 characters, so a chunk under "Configuring retention" of page
 *   "Storage" matches "retention" and "storage"; the full-text leg counts a position by its weight.
 *
 * A stored generated column's expression cannot be altered in PostgreSQL 15, so `tsv` is dropped
 * (with its GIN index) and added again, which rewrites the table without firing the term statistics
 * triggers; the statistics (`text_term_stats`, `text_corpus_stats`) are therefore rebuilt from every
 * full-text row, as their migration backfilled them.
 */
export class ChunkFields1796015482800 implements MigrationInterface {
  name = 'ChunkFields1796015482800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE knowledge_chunks ADD COLUMN title text, ADD COLUMN section text`);
    // Title only: tsv is still the text's, so the statistics triggers see no change.
    await q.query(`UPDATE knowledge_chunks k SET title = s.title FROM knowledge_sources s WHERE s.id = k.source_id`);
    await this.regenerate(q, CHUNK_TSV_EXPRESSION);
  }

  async down(q: QueryRunner): Promise<void> {
    await this.regenerate(q, TEXT_ONLY_TSV);
    await q.query(`ALTER TABLE knowledge_chunks DROP COLUMN section, DROP COLUMN title`);
  }

  /** `tsv` of knowledge chunks generated from `expression`, its index, and the statistics rebuilt. */
  private async regenerate(q: QueryRunner, expression: string): Promise<void> {
    await q.query(`DROP INDEX knowledge_chunks_tsv_idx`);
    await q.query(`ALTER TABLE knowledge_chunks DROP COLUMN tsv`);
    await q.query(`ALTER TABLE knowledge_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (${expression}) STORED`);
    await q.query(`CREATE INDEX knowledge_chunks_tsv_idx ON knowledge_chunks USING gin (project_id, tsv)`);
    const rows = ['insights', 'recommendations', 'knowledge_chunks']
      .map((t) => `SELECT project_id, tsv FROM ${t}`)
      .join(' UNION ALL ');
    await q.query(`DELETE FROM text_term_stats`);
    await q.query(`DELETE FROM text_corpus_stats`);
    await q.query(
      `INSERT INTO text_term_stats (project_id, lexeme, df)
       SELECT r.project_id, u.lexeme, count(*) FROM (${rows}) r CROSS JOIN LATERAL unnest(r.tsv) u GROUP BY 1, 2`,
    );
    await q.query(
      `INSERT INTO text_corpus_stats (project_id, documents, total_length)
       SELECT r.project_id, count(*), sum(length(r.tsv)) FROM (${rows}) r GROUP BY 1`,
    );
  }
}
