import { countTokens } from './token-length';

describe('token-length', () => {
  describe(countTokens.name, () => {
    it('counts o200k_base tokens', () => {
      expect(countTokens('')).toBe(0);
      expect(countTokens('hello world')).toBe(2);
      expect(countTokens('CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops);')).toBe(15);
    });

    it('counts special-token text as ordinary text instead of throwing', () => {
      expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
    });
  });
});
