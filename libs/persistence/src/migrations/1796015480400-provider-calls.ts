import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `provider_calls` (what each project paid, call by call), one row per upstream call (an answer, its retry after an
 * overflow, a count endpoint call), with the provider's raw usage object and its normalised buckets
 * in the OpenTelemetry GenAI convention (input includes cache read and write; output includes
 * reasoning), the planned prompt count, timings, and how the call ended (finish reason or typed
 * error code). `cost_usd` is the cost at the price in force when the call was made (exact decimal,
 * pico-dollars), with the price row it came from; null when the model has no price or no usage.
 *
 * A separate table from `token_usage_records`: those are calibration evidence (our estimate against a
 * report) that planning reads back per counter; these are the ledger, and include calls with no report.
 * No foreign key to the session (a deleted session keeps its spend); the project cascades.
 */
export class ProviderCalls1796015480400 implements MigrationInterface {
  name = 'ProviderCalls1796015480400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE provider_calls (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        session_id uuid,
        ask_id uuid,
        operation text NOT NULL CHECK (operation IN ('chat', 'count_tokens', 'embeddings')),
        purpose text NOT NULL CHECK (purpose IN ('answer', 'overflow_retry', 'count', 'embed', 'summary')),
        provider text NOT NULL,
        requested_model text NOT NULL,
        answering_model text,
        raw_usage jsonb,
        usage_error text,
        input_tokens int CHECK (input_tokens >= 0),
        cache_read_tokens int CHECK (cache_read_tokens >= 0),
        cache_write_tokens int CHECK (cache_write_tokens >= 0),
        output_tokens int CHECK (output_tokens >= 0),
        reasoning_tokens int CHECK (reasoning_tokens >= 0),
        planned_tokens int CHECK (planned_tokens >= 0),
        time_to_first_chunk_ms int CHECK (time_to_first_chunk_ms >= 0),
        duration_ms int NOT NULL CHECK (duration_ms >= 0),
        finish_reason text,
        error_code text,
        cost_usd numeric(24, 12) CHECK (cost_usd >= 0),
        price_family text,
        started_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (cache_read_tokens + cache_write_tokens <= input_tokens),
        CHECK (reasoning_tokens <= output_tokens)
      )`);
    await q.query(`CREATE INDEX provider_calls_project_started_idx ON provider_calls (project_id, started_at)`);
    await q.query(`CREATE INDEX provider_calls_ask_idx ON provider_calls (ask_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE provider_calls');
  }
}
