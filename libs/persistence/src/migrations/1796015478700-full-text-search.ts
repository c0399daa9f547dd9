import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables searched by full text, with the text their search vector is built from. */
const TABLES = [
  { table: 'insights', text: `name || ' ' || description` },
  { table: 'recommendations', text: `title || ' ' || body` },
  { table: 'knowledge_chunks', text: 'text' },
] as const;

/**
 * The full-text leg of hybrid retrieval: a stored `tsv tsvector` per insight, recommendation and
 * knowledge chunk, generated from its text with the row's `ts_config` (the project's text search
 * configuration when the row was written, `simple` when the project names none), and a GIN index
 * on it. A BEFORE INSERT trigger copies the configuration from `projects.retrieval_settings`, so
 * the writers need not know about it; changing a project's configuration rewrites its rows'
 * `ts_config` (ProjectsRepository.updateSettings), which regenerates `tsv`. The GIN index is on
 * `(project_id, tsv)` (the `btree_gin` extension, trusted since PostgreSQL 13 and part of every
 * PostgreSQL distribution's contrib), so one index scan applies the tenant filter and the match.
 * `projects.retrieval_settings` (jsonb, null = defaults) holds the retrieval method and weights.
 */
export class FullTextSearch1796015478700 implements MigrationInterface {
  name = 'FullTextSearch1796015478700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    await q.query(`ALTER TABLE projects ADD COLUMN retrieval_settings jsonb`);
    await q.query(`
      CREATE FUNCTION ask_row_text_search_config() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.ts_config := COALESCE(
          (SELECT (p.retrieval_settings ->> 'textSearchConfig')::regconfig FROM projects p WHERE p.id = NEW.project_id),
          'simple'::regconfig);
        RETURN NEW;
      END $$`);
    for (const { table, text } of TABLES) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN ts_config regconfig NOT NULL DEFAULT 'simple'`);
      await q.query(
        `ALTER TABLE ${table} ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector(ts_config, ${text})) STORED`,
      );
      await q.query(`CREATE INDEX ${table}_tsv_idx ON ${table} USING gin (project_id, tsv)`);
      await q.query(
        `CREATE TRIGGER ${table}_text_search_config BEFORE INSERT ON ${table} ` +
          `FOR EACH ROW EXECUTE FUNCTION ask_row_text_search_config()`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table } of TABLES) {
      await q.query(`DROP TRIGGER ${table}_text_search_config ON ${table}`);
      await q.query(`DROP INDEX ${table}_tsv_idx`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN tsv`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN ts_config`);
    }
    await q.query(`DROP FUNCTION ask_row_text_search_config()`);
    await q.query(`ALTER TABLE projects DROP COLUMN retrieval_settings`);
  }
}
