import { type TextSearchConfig, textSearchConfigForLanguage } from '@ask/ask-contracts';
import type { EntityManager } from 'typeorm';

/** Tables whose rows carry a `ts_config` (and the `tsv` generated from it). */
const FULL_TEXT_TABLES = ['insights', 'recommendations', 'knowledge_chunks'] as const;

/**
 * Sets the project's text search configuration in force (`projects.text_search_config`) and makes
 * its rows agree, in the caller's transaction: the explicit `retrieval_settings.textSearchConfig`,
 * else the configuration of the language most of its knowledge chunks are in
 * (`knowledge_sources.language`, weighted by `chunk_count`; ties to the lower code), else of
 * `provisionalLanguage` (an ingestion's detected language, before its documents are stored), else
 * the configuration stays as it is (`simple` for a new project). When it changes, every insight,
 * recommendation and chunk of the project gets the new `ts_config`, which regenerates its `tsv`.
 * Holds the project's knowledge advisory lock (as `KnowledgeRepository.replaceSource` does), so
 * chunks written concurrently are inserted after the change, with the new configuration.
 * @param provisionalLanguage ISO 639-1 code, or null/undefined when unknown.
 * @returns the configuration in force; null when the project does not exist.
 */
export async function applyTextSearchConfig(
  manager: EntityManager,
  projectId: string,
  provisionalLanguage?: string | null,
): Promise<TextSearchConfig | null> {
  await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`knowledge:${projectId}`]);
  const rows: Array<{ explicit: TextSearchConfig | null; current: TextSearchConfig; language: string | null }> =
    await manager.query(
      `SELECT p.retrieval_settings ->> 'textSearchConfig' AS explicit, p.text_search_config AS current,
              (SELECT s.language FROM knowledge_sources s
                WHERE s.project_id = p.id AND s.language IS NOT NULL AND s.chunk_count > 0
                GROUP BY s.language ORDER BY sum(s.chunk_count) DESC, s.language LIMIT 1) AS language
         FROM projects p WHERE p.id = $1 FOR UPDATE`,
      [projectId],
    );
  if (!rows[0]) return null;
  const { explicit, current, language } = rows[0];
  const detected = language ?? provisionalLanguage ?? null;
  const config = explicit ?? (detected === null ? current : textSearchConfigForLanguage(detected));
  if (config === current) return config;
  await manager.query('UPDATE projects SET text_search_config = $2 WHERE id = $1', [projectId, config]);
  for (const table of FULL_TEXT_TABLES) {
    await manager.query(
      `UPDATE ${table} SET ts_config = $2::regconfig WHERE project_id = $1 AND ts_config <> $2::regconfig`,
      [projectId, config],
    );
  }
  return config;
}
