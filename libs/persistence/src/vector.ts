import { fromSql, toSql } from 'pgvector';
import type { ValueTransformer } from 'typeorm';

/**
 * Vector lengths (dimensions) that get a partial expression HNSW cosine index on every embedding table.
 *
 * Embeddings are stored in an untyped `vector` column next to `embedding_dims`, so projects with
 * different embedding models share one table; each index covers the rows of one length, e.g.
 * `USING hnsw ((embedding::vector(256)) vector_cosine_ops) WHERE embedding_dims = 256`.
 * Other lengths up to 16,000 (pgvector's `vector` limit) are stored and searched exactly without an
 * index. HNSW indexes `vector` up to 2,000 dimensions (pgvector README, "HNSW"); a longer model
 * would need a `halfvec` expression index (up to 4,000), which no supported provider needs yet.
 */
export const INDEXED_EMBEDDING_DIMENSIONS = [256, 384, 512, 768, 1024, 1536] as const;

/** Largest vector length pgvector's `vector` type stores (pgvector README, "Vector Type"). */
export const MAX_VECTOR_DIMENSIONS = 16_000;

/**
 * Serialises an embedding for a SQL parameter with the pgvector client (`[1,2,3]` text form).
 * @throws Error when the array holds a non-finite number (pgvector rejects NaN and Infinity).
 */
export function vectorParam(embedding: readonly number[]): string {
  for (const v of embedding) {
    if (!Number.isFinite(v)) throw new Error('embedding holds a non-finite number');
  }
  return toSql([...embedding]) as string;
}

/** Parses a `vector` value read as text (`[1,2,3]`) with the pgvector client. */
export function parseVector(value: string | null): number[] | null {
  return value === null ? null : (fromSql(value) as number[]);
}

/**
 * SQL expression of a row's embedding as seen by the HNSW index for `dimensions`: the cast to the
 * typed vector for indexed lengths (so the planner matches the partial expression index), the bare
 * column otherwise. `dimensions` must be a validated positive integer: it is written into the SQL.
 */
export function embeddingExpression(column: string, dimensions: number): string {
  assertDimensions(dimensions);
  return isIndexedDimension(dimensions) ? `(${column}::vector(${dimensions}))` : column;
}

/** Whether `dimensions` has a partial HNSW index (see {@link INDEXED_EMBEDDING_DIMENSIONS}). */
export function isIndexedDimension(dimensions: number): boolean {
  return (INDEXED_EMBEDDING_DIMENSIONS as readonly number[]).includes(dimensions);
}

/**
 * @throws RangeError unless `dimensions` is an integer in 1..16,000.
 */
export function assertDimensions(dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_VECTOR_DIMENSIONS) {
    throw new RangeError(`embedding dimensions must be an integer in 1..${MAX_VECTOR_DIMENSIONS}, got ${dimensions}`);
  }
}

/**
 * TypeORM transformer for an entity's `vector` column: writes with pgvector's `toSql`, reads with
 * `fromSql` (TypeORM may already have parsed the text into an array, which passes through).
 */
export const vectorTransformer: ValueTransformer = {
  to: (value: number[] | null | undefined) => (value == null ? value : toSql(value)),
  from: (value: string | number[] | null) => (typeof value === 'string' ? fromSql(value) : value),
};
