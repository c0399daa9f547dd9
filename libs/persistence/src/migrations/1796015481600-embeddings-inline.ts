import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables with an untyped `embedding vector` column (frozen copy: a migration never changes). */
const EMBEDDING_TABLES = ['insights', 'recommendations', 'knowledge_chunks'] as const;

/**
 * Embeddings are stored in the row (`STORAGE MAIN`) instead of out of line in the table's TOAST
 * relation (`EXTERNAL`, pgvector's default for `vector`).
 *
 * A knowledge chunk's row is its text (~1.2 KB for a PostgreSQL-manual chunk), its `tsv` and a
 * 256-dimension embedding (1,028 bytes): past PostgreSQL's 2 KB TOAST threshold, so with `EXTERNAL`
 * nearly every embedding was moved out of line, and the exact scan of a small project
 * (RetrievalRepository.search, every ask) fetched each one through the TOAST index: for the manual's
 * 5,863 chunks, 10,946 shared buffers per search (`EXPLAIN (ANALYZE, BUFFERS)`; the heap is 1,078
 * pages), and 1,249 with the embeddings in the row. With `MAIN` the text and `tsv` (`EXTENDED`) are
 * compressed and moved out first; an embedding leaves the row only if the row still does not fit in
 * a page (a vector above ~2,000 dimensions), so no length is refused.
 *
 * `SET STORAGE` alone applies to rows written afterwards; the `TYPE … USING` in the same statement
 * rewrites the existing rows with it (values unchanged: `real[]` holds a `vector`'s floats exactly),
 * which holds the table's ACCESS EXCLUSIVE lock while it rewrites the rows and rebuilds the indexes,
 * HNSW included. Down restores `EXTERNAL` for new rows; existing rows stay inline, which reads the
 * same.
 */
export class EmbeddingsInline1796015481600 implements MigrationInterface {
  name = 'EmbeddingsInline1796015481600';

  async up(q: QueryRunner): Promise<void> {
    for (const table of EMBEDDING_TABLES) {
      // One statement: the rewrite of ALTER … TYPE runs after SET STORAGE, so it lays the rows out inline
      // (a separate ALTER … TYPE would also reset the column to the type's EXTERNAL).
      await q.query(
        `ALTER TABLE ${table} ALTER COLUMN embedding TYPE vector USING embedding::real[]::vector,
                              ALTER COLUMN embedding SET STORAGE MAIN`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of EMBEDDING_TABLES) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN embedding SET STORAGE EXTERNAL`);
    }
  }
}
