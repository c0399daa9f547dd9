import {
  assertDimensions,
  embeddingExpression,
  INDEXED_EMBEDDING_DIMENSIONS,
  isIndexedDimension,
  parseVector,
  vectorParam,
  vectorTransformer,
} from './vector';

describe('vector', () => {
  describe(vectorParam.name, () => {
    it('writes the pgvector text form', () => {
      expect(vectorParam([1, -0.5, 0.25])).toBe('[1,-0.5,0.25]');
    });

    it('rejects NaN and Infinity', () => {
      expect(() => vectorParam([1, Number.NaN])).toThrow('embedding holds a non-finite number');
      expect(() => vectorParam([Number.POSITIVE_INFINITY])).toThrow('embedding holds a non-finite number');
    });
  });

  describe(parseVector.name, () => {
    it('reads the pgvector text form and null', () => {
      expect(parseVector('[1,-0.5,0.25]')).toEqual([1, -0.5, 0.25]);
      expect(parseVector(null)).toBeNull();
    });
  });

  describe(embeddingExpression.name, () => {
    it('casts to the typed vector for every indexed length', () => {
      expect(INDEXED_EMBEDDING_DIMENSIONS.map((d) => embeddingExpression('k.embedding', d))).toEqual([
        '(k.embedding::vector(256))',
        '(k.embedding::vector(384))',
        '(k.embedding::vector(512))',
        '(k.embedding::vector(768))',
        '(k.embedding::vector(1024))',
        '(k.embedding::vector(1536))',
      ]);
    });

    it('leaves the bare column for lengths without an index', () => {
      expect(embeddingExpression('k.embedding', 3)).toBe('k.embedding');
      expect(embeddingExpression('k.embedding', 3072)).toBe('k.embedding');
      expect(isIndexedDimension(3072)).toBe(false);
    });
  });

  describe(assertDimensions.name, () => {
    it('accepts 1..16000 and rejects the rest', () => {
      expect(() => assertDimensions(1)).not.toThrow();
      expect(() => assertDimensions(16_000)).not.toThrow();
      expect(() => assertDimensions(0)).toThrow(RangeError);
      expect(() => assertDimensions(16_001)).toThrow(RangeError);
      expect(() => assertDimensions(2.5)).toThrow(RangeError);
    });
  });

  describe('vectorTransformer', () => {
    it('writes with toSql and reads strings or already-parsed arrays', () => {
      expect(vectorTransformer.to([1, 2])).toBe('[1,2]');
      expect(vectorTransformer.to(null)).toBeNull();
      expect(vectorTransformer.from('[1,2]')).toEqual([1, 2]);
      expect(vectorTransformer.from([1, 2])).toEqual([1, 2]);
    });
  });
});
