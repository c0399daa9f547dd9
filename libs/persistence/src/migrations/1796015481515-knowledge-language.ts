import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The full-text leg follows the knowledge's language.
 *
 * - `knowledge_sources.language`: the ISO 639-1 code tinyld detected in the document at ingestion
 *   (null: not detected, e.g. too short).
 * - `projects.text_search_config`: the text search configuration in force for the project, the one
 *   its rows' `ts_config` (hence their generated `tsv`) and the full-text query both use: the
 *   explicit `retrieval_settings.textSearchConfig`, else the configuration of the language most of
 *   the project's chunks are in, else `simple`. Kept by the application
 *   (`ProjectsRepository.applyTextSearchConfig`), which rewrites the rows' `ts_config` in the same
 *   transaction whenever it changes; backfilled here from the explicit setting.
 *
 * The insert trigger of `FullTextSearch1796015478700` now copies `projects.text_search_config`, so
 * a row is indexed with the configuration in force when it is written. `tsv` stays a stored
 * generated column of `(ts_config, text)`: a column of one fixed configuration could not follow the
 * project, and a per-row configuration keeps the GIN index usable with one query configuration.
 */
export class KnowledgeLanguage1796015481515 implements MigrationInterface {
  name = 'KnowledgeLanguage1796015481515';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE knowledge_sources ADD COLUMN language text`);
    await q.query(`ALTER TABLE projects ADD COLUMN text_search_config text NOT NULL DEFAULT 'simple'`);
    await q.query(
      `UPDATE projects SET text_search_config = retrieval_settings ->> 'textSearchConfig'
        WHERE retrieval_settings ->> 'textSearchConfig' IS NOT NULL`,
    );
    await q.query(`
      CREATE OR REPLACE FUNCTION ask_row_text_search_config() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.ts_config := COALESCE(
          (SELECT p.text_search_config::regconfig FROM projects p WHERE p.id = NEW.project_id),
          'simple'::regconfig);
        RETURN NEW;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION ask_row_text_search_config() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.ts_config := COALESCE(
          (SELECT (p.retrieval_settings ->> 'textSearchConfig')::regconfig FROM projects p WHERE p.id = NEW.project_id),
          'simple'::regconfig);
        RETURN NEW;
      END $$`);
    await q.query(`ALTER TABLE projects DROP COLUMN text_search_config`);
    await q.query(`ALTER TABLE knowledge_sources DROP COLUMN language`);
  }
}
