import { EmbeddingShapeError } from '../errors/upstream-errors';

/**
 * Checks an embedding answer against the request and the project's settings: one vector per text,
 * each of exactly `dimensions` numbers.
 * @returns the vectors unchanged.
 * @throws EmbeddingShapeError otherwise (classified `fatal`: storing it would mix vector sizes).
 */
export function checkEmbeddings(provider: string, texts: number, dimensions: number, vectors: number[][]): number[][] {
  const wrong = vectors.find((v) => v.length !== dimensions);
  if (vectors.length !== texts || wrong) {
    throw new EmbeddingShapeError(
      provider,
      { vectors: texts, dimensions },
      { vectors: vectors.length, dimensions: (wrong ?? vectors[0] ?? []).length },
    );
  }
  return vectors;
}
