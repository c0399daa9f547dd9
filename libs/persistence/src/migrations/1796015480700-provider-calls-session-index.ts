import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index on `provider_calls (session_id)`, so one session's calls (the dashboard's
 * picture of a session, `GET …/sessions/:sessionId/usage`) are one index scan, not a scan of the
 * project's calls. Partial: calls of no session (count endpoints outside an ask) are not indexed.
 */
export class ProviderCallsSessionIndex1796015480700 implements MigrationInterface {
  name = 'ProviderCallsSessionIndex1796015480700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX provider_calls_session_idx ON provider_calls (session_id, started_at) WHERE session_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX provider_calls_session_idx');
  }
}
