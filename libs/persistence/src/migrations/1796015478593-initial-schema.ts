import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The first schema: projects and their API keys, insights, recommendations, knowledge sources and
 * chunks (untyped pgvector `vector` columns with `embedding_dims`), ask sessions and their messages,
 * and token usage records. Hand-written; the entities mirror it (never `synchronize`).
 *
 * Needs the `vector` extension, which it creates when missing (superuser, or pgvector's trusted
 * install on PostgreSQL 13+). `down` drops the tables but leaves the extension, which other
 * databases' objects may use.
 */
export class InitialSchema1796015478593 implements MigrationInterface {
  name = 'InitialSchema1796015478593';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS vector`);

    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        embedding_settings jsonb,
        llm_settings jsonb,
        top_k int NOT NULL DEFAULT 8 CHECK (top_k >= 1),
        max_tokens int NOT NULL DEFAULT 2048 CHECK (max_tokens >= 1),
        system_prompt text,
        max_history_messages int CHECK (max_history_messages >= 0),
        credentials_encrypted bytea,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        prefix text NOT NULL,
        key_hash bytea NOT NULL CHECK (length(key_hash) = 32),
        name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        CONSTRAINT api_keys_prefix_key UNIQUE (prefix)
      )`);
    await q.query(`CREATE INDEX api_keys_project_id_idx ON api_keys (project_id)`);

    for (const [table, first, second] of [
      ['insights', 'name', 'description'],
      ['recommendations', 'title', 'body'],
    ] as const) {
      await q.query(`
        CREATE TABLE ${table} (
          id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
          project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
          external_id text NOT NULL,
          ${first} text NOT NULL,
          ${second} text NOT NULL,
          content_hash text NOT NULL,
          embedding vector NOT NULL,
          embedding_dims int NOT NULL,
          embedding_model text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          CONSTRAINT ${table}_project_external_id_key UNIQUE (project_id, external_id),
          CONSTRAINT ${table}_embedding_dims_check CHECK (vector_dims(embedding) = embedding_dims)
        )`);
    }

    await q.query(`
      CREATE TABLE knowledge_sources (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        uri text NOT NULL,
        title text NOT NULL,
        content_hash text NOT NULL,
        chunk_count int NOT NULL CHECK (chunk_count >= 0),
        embedding_dims int NOT NULL,
        embedding_model text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT knowledge_sources_project_uri_key UNIQUE (project_id, uri)
      )`);

    await q.query(`
      CREATE TABLE knowledge_chunks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        source_id uuid NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        ordinal int NOT NULL CHECK (ordinal >= 0),
        text text NOT NULL,
        token_count int NOT NULL CHECK (token_count >= 0),
        embedding vector NOT NULL,
        embedding_dims int NOT NULL,
        CONSTRAINT knowledge_chunks_source_ordinal_key UNIQUE (source_id, ordinal),
        CONSTRAINT knowledge_chunks_embedding_dims_check CHECK (vector_dims(embedding) = embedding_dims)
      )`);
    await q.query(`CREATE INDEX knowledge_chunks_project_id_idx ON knowledge_chunks (project_id)`);

    await q.query(`
      CREATE TABLE ask_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        title text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX ask_sessions_project_updated_idx ON ask_sessions (project_id, updated_at DESC, id)`);

    await q.query(`
      CREATE TABLE ask_session_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigserial NOT NULL,
        session_id uuid NOT NULL REFERENCES ask_sessions (id) ON DELETE CASCADE,
        ask_id text NOT NULL,
        question text NOT NULL,
        answer text NOT NULL,
        status text NOT NULL DEFAULT 'complete' CHECK (status IN ('complete')),
        token_counts jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(token_counts) = 'object'),
        prompt_tokens int,
        completion_tokens int,
        provider text,
        model text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ask_session_messages_ask_id_key UNIQUE (ask_id)
      )`);
    await q.query(
      `CREATE INDEX ask_session_messages_session_order_idx ON ask_session_messages (session_id, created_at, seq)`,
    );

    await q.query(`
      CREATE TABLE token_usage_records (
        id bigserial PRIMARY KEY,
        model text NOT NULL,
        counter_id text NOT NULL,
        estimated int NOT NULL CHECK (estimated >= 0),
        reported int NOT NULL CHECK (reported >= 0),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX token_usage_records_model_created_idx ON token_usage_records (model, created_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'token_usage_records',
      'ask_session_messages',
      'ask_sessions',
      'knowledge_chunks',
      'knowledge_sources',
      'recommendations',
      'insights',
      'api_keys',
      'projects',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
