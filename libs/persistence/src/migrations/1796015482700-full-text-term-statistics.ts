import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables searched by full text (their `tsv` is what the statistics count). */
const TABLES = ['insights', 'recommendations', 'knowledge_chunks'] as const;

/**
 * Term statistics of each project's full-text rows, for BM25 in the full-text leg
 * (`RetrievalRepository.searchFullText`): the rarity of a word in the project and the length of a
 * row against the project's mean are read from two small tables by primary key, instead of counting
 * document frequencies over the rows at query time.
 *
 * - `text_term_stats (project_id, lexeme) → df`: how many of the project's rows (insights,
 *   recommendations, knowledge chunks) hold the lexeme in their `tsv`. A lexeme of no row has no row.
 * - `text_corpus_stats (project_id) → documents, total_length`: the project's rows and the sum of
 *   their `length(tsv)` (distinct lexemes per row, the length BM25 normalises by).
 *
 * Kept by statement-level AFTER INSERT / UPDATE / DELETE triggers with transition tables on the three
 * tables, so every writer (ingestion's insert, replace and delete of a document, a source deleted with
 * its chunks, a change of the project's text search configuration that regenerates `tsv`) moves them
 * in its own transaction, by one grouped upsert per statement. An update that leaves `tsv` unchanged
 * (re-embedding) changes nothing. The trigger takes the project's knowledge advisory lock (as
 * `KnowledgeRepository.replaceSource` does; re-entrant), projects in id order, so two writers of one
 * project never lock the same statistics rows in different orders. Backfilled from existing rows.
 */
export class FullTextTermStatistics1796015482700 implements MigrationInterface {
  name = 'FullTextTermStatistics1796015482700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE text_term_stats (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        lexeme text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (project_id, lexeme)
      )`);
    await q.query(`
      CREATE TABLE text_corpus_stats (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        documents integer NOT NULL,
        total_length bigint NOT NULL
      )`);
    // The changed rows as (project_id, tsv, sign): +1 inserted, −1 deleted, both for an update that
    // moved tsv. Read by EXECUTE, which sees the statement's transition tables, so one function serves
    // the three triggers (each names only the transition tables it has). Rows of a project being
    // deleted (the cascade) are skipped: its statistics go with it.
    await q.query(`
      CREATE FUNCTION ask_text_stats_apply() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        changed text := CASE TG_OP
          WHEN 'INSERT' THEN 'SELECT n.project_id, n.tsv, 1 AS sign FROM new_rows n'
          WHEN 'DELETE' THEN 'SELECT o.project_id, o.tsv, -1 AS sign FROM old_rows o'
          ELSE 'SELECT x.project_id, x.tsv, x.sign FROM old_rows o JOIN new_rows n ON n.id = o.id
                 CROSS JOIN LATERAL (VALUES (o.project_id, o.tsv, -1), (n.project_id, n.tsv, 1)) AS x(project_id, tsv, sign)
                 WHERE o.tsv IS DISTINCT FROM n.tsv OR o.project_id IS DISTINCT FROM n.project_id' END;
        live text := 'SELECT d.* FROM (' || changed || ') d WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = d.project_id)';
      BEGIN
        EXECUTE 'SELECT count(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended(''knowledge:'' || p.project_id, 0))
                   FROM (SELECT DISTINCT project_id FROM (' || live || ') l ORDER BY 1) p) locked';
        EXECUTE 'WITH delta AS (
                   SELECT d.project_id, u.lexeme, sum(d.sign)::int AS n
                     FROM (' || live || ') d CROSS JOIN LATERAL unnest(d.tsv) u
                    GROUP BY 1, 2 HAVING sum(d.sign) <> 0),
                 gone AS (
                   DELETE FROM text_term_stats t USING delta d
                    WHERE t.project_id = d.project_id AND t.lexeme = d.lexeme AND t.df + d.n <= 0
                   RETURNING t.project_id, t.lexeme)
                 INSERT INTO text_term_stats AS t (project_id, lexeme, df)
                 SELECT d.project_id, d.lexeme, d.n FROM delta d
                  WHERE NOT EXISTS (SELECT 1 FROM gone g WHERE g.project_id = d.project_id AND g.lexeme = d.lexeme)
                    AND (d.n > 0 OR EXISTS (SELECT 1 FROM text_term_stats s
                                             WHERE s.project_id = d.project_id AND s.lexeme = d.lexeme))
                  ORDER BY 1, 2
                 ON CONFLICT (project_id, lexeme) DO UPDATE SET df = t.df + excluded.df';
        EXECUTE 'INSERT INTO text_corpus_stats AS c (project_id, documents, total_length)
                 SELECT d.project_id, sum(d.sign), sum(d.sign * length(d.tsv)) FROM (' || live || ') d
                  GROUP BY 1 ORDER BY 1
                 ON CONFLICT (project_id) DO UPDATE
                   SET documents = c.documents + excluded.documents, total_length = c.total_length + excluded.total_length';
        RETURN NULL;
      END $$`);
    for (const table of TABLES) {
      await q.query(
        `CREATE TRIGGER ${table}_text_stats_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows ` +
          `FOR EACH STATEMENT EXECUTE FUNCTION ask_text_stats_apply()`,
      );
      await q.query(
        `CREATE TRIGGER ${table}_text_stats_update AFTER UPDATE ON ${table} ` +
          `REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ask_text_stats_apply()`,
      );
      await q.query(
        `CREATE TRIGGER ${table}_text_stats_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows ` +
          `FOR EACH STATEMENT EXECUTE FUNCTION ask_text_stats_apply()`,
      );
    }
    const rows = TABLES.map((t) => `SELECT project_id, tsv FROM ${t}`).join(' UNION ALL ');
    await q.query(
      `INSERT INTO text_term_stats (project_id, lexeme, df)
       SELECT r.project_id, u.lexeme, count(*) FROM (${rows}) r CROSS JOIN LATERAL unnest(r.tsv) u GROUP BY 1, 2`,
    );
    await q.query(
      `INSERT INTO text_corpus_stats (project_id, documents, total_length)
       SELECT r.project_id, count(*), sum(length(r.tsv)) FROM (${rows}) r GROUP BY 1`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      for (const op of ['insert', 'update', 'delete'])
        await q.query(`DROP TRIGGER ${table}_text_stats_${op} ON ${table}`);
    }
    await q.query(`DROP FUNCTION ask_text_stats_apply()`);
    await q.query(`DROP TABLE text_corpus_stats`);
    await q.query(`DROP TABLE text_term_stats`);
  }
}
