import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Frozen copy of INDEXED_EMBEDDING_DIMENSIONS at the time of this migration (a migration never changes). */
const DIMENSIONS = [256, 384, 512, 768, 1024, 1536] as const;

/** Tables with an untyped `embedding vector` column and its `embedding_dims`. */
const EMBEDDING_TABLES = ['insights', 'recommendations', 'knowledge_chunks'] as const;

/**
 * Partial expression HNSW cosine indexes, one per embedding table and indexed length:
 * `USING hnsw ((embedding::vector(N)) vector_cosine_ops) WHERE embedding_dims = N`.
 *
 * The column is untyped so projects with different models share the tables, and HNSW needs a typed
 * vector; the cast plus the partial predicate gives each length its own graph. A search uses the
 * index only when it orders by the same expression under the same predicate (RetrievalRepository
 * does). Lengths outside INDEXED_EMBEDDING_DIMENSIONS are searched exactly, without an index; HNSW
 * accepts `vector` up to 2,000 dimensions (pgvector README), so a longer model would need a
 * `halfvec` expression index instead. Default build parameters (m = 16, ef_construction = 64).
 */
export class EmbeddingHnswIndexes1796015478594 implements MigrationInterface {
  name = 'EmbeddingHnswIndexes1796015478594';

  async up(q: QueryRunner): Promise<void> {
    for (const table of EMBEDDING_TABLES) {
      for (const dims of DIMENSIONS) {
        await q.query(
          `CREATE INDEX ${table}_embedding_${dims}_hnsw_idx ON ${table} ` +
            `USING hnsw ((embedding::vector(${dims})) vector_cosine_ops) WHERE embedding_dims = ${dims}`,
        );
      }
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of EMBEDDING_TABLES) {
      for (const dims of DIMENSIONS) {
        await q.query(`DROP INDEX ${table}_embedding_${dims}_hnsw_idx`);
      }
    }
  }
}
