import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each stored answer keeps the `budget` event it was answered under (window,
 * max_tokens, reserve, margin, counter, used, kept / dropped turns and context, kept turn ids) and
 * the sources it cited, so a reopened session shows each turn as the live view did. Null / `[]` for
 * answers stored before this migration.
 */
export class MessageBudgetAndSources1796015480600 implements MigrationInterface {
  name = 'MessageBudgetAndSources1796015480600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ask_session_messages ADD COLUMN budget jsonb NULL`);
    await q.query(`ALTER TABLE ask_session_messages ADD COLUMN sources jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ask_session_messages DROP COLUMN sources`);
    await q.query(`ALTER TABLE ask_session_messages DROP COLUMN budget`);
  }
}
