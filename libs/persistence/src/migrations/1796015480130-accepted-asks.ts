import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `asks`: every ask the gateway accepted, written with the 202, so an ask whose job or event stream
 * Redis lost (a restart without persistence) is found and re-enqueued or ended with a typed error
 * (the retrieval worker's reconciler). `session_id` has no foreign key on purpose: deleting the
 * session must not delete the record of the ask that is still running in it.
 */
export class AcceptedAsks1796015480130 implements MigrationInterface {
  name = 'AcceptedAsks1796015480130';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE asks (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        session_id uuid NOT NULL,
        question text NOT NULL,
        accepted_at timestamptz NOT NULL,
        state text NOT NULL DEFAULT 'accepted' CHECK (state IN ('accepted', 'done', 'error')),
        error_code text,
        requeues int NOT NULL DEFAULT 0 CHECK (requeues >= 0),
        ended_at timestamptz,
        CHECK ((state = 'accepted') = (ended_at IS NULL))
      )`);
    await q.query(`CREATE INDEX asks_open_idx ON asks (accepted_at) WHERE state = 'accepted'`);
    await q.query(`CREATE INDEX asks_session_open_idx ON asks (session_id) WHERE state = 'accepted'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE asks');
  }
}
