import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Calibration is learned per project (one tenant never moves another), from mixed-script requests too.
 *
 * - `token_usage_records.project_id`: the project whose ask the record comes from; a project plans
 *   with its own records (the newest per script class of the project), so one tenant's traffic can
 *   neither evict another's evidence nor move its factors. Null on records stored before: those only
 *   feed the model-wide prior (which may only make a plan larger). Dropped with the project.
 * - `token_usage_records.masses`: the request's floor and estimate per script class,
 *   `{"hangul": [812.4, 3241.9], "latin": [203.1, 284.0]}` (tokens, framing excluded), from which
 *   least squares attributes the reported prompt tokens to each class. Null on records from before
 *   (their floor is then shared evenly among their `script` classes).
 * - An index on (project_id, model, counter_id, script, created_at DESC, id DESC) for the project's
 *   newest records per class.
 */
export class ProjectCalibration1796015482600 implements MigrationInterface {
  name = 'ProjectCalibration1796015482600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE token_usage_records ADD COLUMN project_id uuid NULL REFERENCES projects (id) ON DELETE CASCADE`,
    );
    await q.query(`ALTER TABLE token_usage_records ADD COLUMN masses jsonb NULL`);
    await q.query(
      `CREATE INDEX token_usage_records_project_idx
         ON token_usage_records (project_id, model, counter_id, script, created_at DESC, id DESC)
         WHERE project_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX token_usage_records_project_idx`);
    await q.query(`ALTER TABLE token_usage_records DROP COLUMN masses`);
    await q.query(`ALTER TABLE token_usage_records DROP COLUMN project_id`);
  }
}
