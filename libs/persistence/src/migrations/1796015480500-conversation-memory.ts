import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conversation memory. Summaries live beside the messages and never replace them:
 *
 * - `turn_summaries`: one short summary per question/answer pair (keyed by the message), with its
 *   token counts per counter id, the provider and model that wrote it;
 * - `session_summaries`: one per session, covering every pair up to `covers_up_to` (a message id;
 *   `covers_turns` pairs), with its counts, model, and how many rolling updates it had since it was
 *   last rebuilt from the original messages (`rolling_updates`);
 * - `summary_calls`: one usage row per summariser call (prompt, completion and cache-read tokens as
 *   the provider reported them, and how the call ended), separate from the answers' usage.
 *
 * Text is CHECKed non-blank: a failed or empty summariser call can never be stored as a summary.
 * Deleting a session or a message deletes its summaries (cascade); `summary_calls` keeps the usage
 * of a deleted session (no foreign key to the session).
 */
export class ConversationMemory1796015480500 implements MigrationInterface {
  name = 'ConversationMemory1796015480500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE projects ADD COLUMN memory_settings jsonb`);
    await q.query(`
      CREATE TABLE turn_summaries (
        message_id uuid PRIMARY KEY REFERENCES ask_session_messages (id) ON DELETE CASCADE,
        session_id uuid NOT NULL REFERENCES ask_sessions (id) ON DELETE CASCADE,
        text text NOT NULL CHECK (btrim(text) <> ''),
        token_counts jsonb NOT NULL DEFAULT '{}'::jsonb,
        provider text NOT NULL,
        model text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX turn_summaries_session_idx ON turn_summaries (session_id)`);
    await q.query(`
      CREATE TABLE session_summaries (
        session_id uuid PRIMARY KEY REFERENCES ask_sessions (id) ON DELETE CASCADE,
        text text NOT NULL CHECK (btrim(text) <> ''),
        covers_up_to uuid NOT NULL REFERENCES ask_session_messages (id) ON DELETE CASCADE,
        covers_turns int NOT NULL CHECK (covers_turns >= 1),
        token_counts jsonb NOT NULL DEFAULT '{}'::jsonb,
        provider text NOT NULL,
        model text NOT NULL,
        rolling_updates int NOT NULL DEFAULT 0 CHECK (rolling_updates >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE summary_calls (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        session_id uuid NOT NULL,
        message_id uuid,
        kind text NOT NULL CHECK (kind IN ('turn', 'session')),
        provider text NOT NULL,
        model text NOT NULL,
        prompt_tokens int CHECK (prompt_tokens >= 0),
        completion_tokens int CHECK (completion_tokens >= 0),
        cache_read_tokens int CHECK (cache_read_tokens >= 0),
        outcome text NOT NULL CHECK (outcome IN ('stored', 'failed', 'timeout', 'empty', 'overflow', 'gone')),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX summary_calls_project_idx ON summary_calls (project_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE summary_calls');
    await q.query('DROP TABLE session_summaries');
    await q.query('DROP TABLE turn_summaries');
    await q.query('ALTER TABLE projects DROP COLUMN memory_settings');
  }
}
