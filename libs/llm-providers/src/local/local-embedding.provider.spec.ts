import { LocalEmbeddingProvider } from './local-embedding.provider';

const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i], 0);
const norm = (a: number[]) => Math.sqrt(cosine(a, a));

describe(LocalEmbeddingProvider.name, () => {
  const provider = new LocalEmbeddingProvider();

  describe('constructor', () => {
    it('describes itself as the local lexical model with 256 dimensions by default', () => {
      expect([provider.provider, provider.model, provider.dimensions, provider.maxBatchSize]).toEqual([
        'local',
        'local-lexical-v1',
        256,
        64,
      ]);
    });

    it('takes other dimensions', () => {
      expect(new LocalEmbeddingProvider({ dimensions: 768 }).dimensions).toBe(768);
    });

    it('rejects a length that is not an integer in 8..16000', () => {
      expect(() => new LocalEmbeddingProvider({ dimensions: 4 })).toThrow(RangeError);
      expect(() => new LocalEmbeddingProvider({ dimensions: 300.5 })).toThrow(RangeError);
      expect(() => new LocalEmbeddingProvider({ dimensions: 16_001 })).toThrow(RangeError);
    });
  });

  describe('embed', () => {
    it('returns one vector of `dimensions` numbers per text, in order', async () => {
      const vectors = await provider.embed(['alpha', 'beta gamma', '']);
      expect(vectors.map((v) => v.length)).toEqual([256, 256, 256]);
      expect(vectors[0]).toEqual(provider.embedOne('alpha'));
      expect(vectors[1]).toEqual(provider.embedOne('beta gamma'));
    });

    it('gives the same vector for the same text, across instances', async () => {
      const [a] = await provider.embed(['HNSW index on vector columns']);
      const [b] = await new LocalEmbeddingProvider().embed(['HNSW index on vector columns']);
      expect(a).toEqual(b);
    });

    it('returns unit vectors, for empty, Latin, CJK, Thai and emoji text', async () => {
      const vectors = await provider.embed(['', '   ', 'The quick brown fox', '向量相似度搜索', 'ค้นหาเวกเตอร์', '🙂🙂']);
      for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 12);
    });

    it('is case- and NFKC-insensitive', () => {
      expect(provider.embedOne('ＨＮＳＷ Index')).toEqual(provider.embedOne('hnsw index'));
    });

    it('ranks a paraphrase sharing words above an unrelated text', () => {
      const query = provider.embedOne('How do I create an HNSW index for cosine distance?');
      const paraphrase = provider.embedOne('Creating an HNSW index with cosine distance operators');
      const unrelated = provider.embedOne('The weather in Lisbon was sunny all week long.');
      expect(cosine(query, paraphrase)).toBeGreaterThan(cosine(query, unrelated));
      expect(cosine(query, paraphrase)).toBeGreaterThan(0.3);
    });

    it('matches Chinese text by shared characters', () => {
      const query = provider.embedOne('如何创建向量索引');
      const related = provider.embedOne('创建向量索引的方法');
      const unrelated = provider.embedOne('今天天气很好');
      expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated));
    });

    it('throws the abort reason when the signal is aborted', async () => {
      const controller = new AbortController();
      controller.abort(new Error('stop'));
      await expect(provider.embed(['text'], controller.signal)).rejects.toThrow('stop');
    });
  });
});
