import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Queued ingestion and embedding spaces that never mix:
 *
 * - `ingestions`: one row per upload or re-embed, written with the gateway's 202: kind, status,
 *   progress counts, per-document failures (typed error bodies), the run's embedding space.
 * - `ingestion_documents`: the raw upload (knowledge documents, or insight / recommendation items)
 *   until the worker has finished with it; deleted with the run's end.
 * - `knowledge_chunks.embedding_model`: each chunk names the `provider/model` of its vector (copied
 *   from its source), so retrieval can filter on the model as well as the length without a join.
 */
export class IngestionJobs1796015480010 implements MigrationInterface {
  name = 'IngestionJobs1796015480010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ingestions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('knowledge', 'insights', 'reembed')),
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        counts jsonb NOT NULL,
        failures jsonb NOT NULL DEFAULT '[]'::jsonb,
        error jsonb,
        embedding_model text,
        embedding_dims int,
        attempts int NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await q.query(`CREATE INDEX ingestions_project_created_idx ON ingestions (project_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE ingestion_documents (
        ingestion_id uuid NOT NULL REFERENCES ingestions (id) ON DELETE CASCADE,
        ordinal int NOT NULL CHECK (ordinal >= 0),
        kind text NOT NULL CHECK (kind IN ('document', 'insight', 'recommendation')),
        uri text NOT NULL,
        title text NOT NULL,
        text text NOT NULL,
        PRIMARY KEY (ingestion_id, ordinal)
      )`);
    await q.query(`ALTER TABLE knowledge_chunks ADD COLUMN embedding_model text`);
    await q.query(
      `UPDATE knowledge_chunks c SET embedding_model = s.embedding_model FROM knowledge_sources s WHERE s.id = c.source_id`,
    );
    await q.query(`ALTER TABLE knowledge_chunks ALTER COLUMN embedding_model SET NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE knowledge_chunks DROP COLUMN embedding_model`);
    await q.query(`DROP TABLE ingestion_documents`);
    await q.query(`DROP TABLE ingestions`);
  }
}
