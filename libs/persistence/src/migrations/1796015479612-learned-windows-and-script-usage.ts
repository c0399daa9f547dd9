import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the service learns from providers under drift.
 *
 * - `learned_windows`: a context window a provider disclosed in an overflow answer that is smaller
 *   than the one planned against, per project and model; later plans use the smaller one. Dropped with
 *   the project.
 * - `token_usage_records.script`: the script class the request was written in (`latin`, `cjk`,
 *   `devanagari`…; token-counting `SCRIPT_CLASSES`) when one class carried at least 85% of it, else
 *   null; calibration learns one factor per class from these. `source` says whether the reported
 *   figure came from an answer's usage (`usage`) or an overflow's disclosed prompt size (`overflow`).
 */
export class LearnedWindowsAndScriptUsage1796015479612 implements MigrationInterface {
  name = 'LearnedWindowsAndScriptUsage1796015479612';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE learned_windows (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        provider text NOT NULL,
        model text NOT NULL,
        window_tokens int NOT NULL CHECK (window_tokens > 0),
        disclosed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, provider, model)
      )`);
    await q.query(`ALTER TABLE token_usage_records ADD COLUMN script text NULL`);
    await q.query(
      `ALTER TABLE token_usage_records ADD COLUMN source text NOT NULL DEFAULT 'usage' CHECK (source IN ('usage', 'overflow'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE token_usage_records DROP COLUMN source`);
    await q.query(`ALTER TABLE token_usage_records DROP COLUMN script`);
    await q.query(`DROP TABLE learned_windows`);
  }
}
