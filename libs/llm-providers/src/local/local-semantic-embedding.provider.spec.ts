import http from 'node:http';
import https from 'node:https';
import { createEmbeddingProvider } from '../create-embedding-provider';
import {
  closeSemanticEmbeddingPools,
  LOCAL_SEMANTIC_DIMENSIONS,
  LocalSemanticEmbeddingProvider,
} from './local-semantic-embedding.provider';

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);

describe(LocalSemanticEmbeddingProvider.name, () => {
  describe('embed', () => {
    const requests: string[] = [];
    const realFetch = globalThis.fetch;
    let vectors: number[][];

    beforeAll(async () => {
      // Anything fetched or requested while the model loads and embeds fails the suite: the model
      // must come from the npm package's files, never from a model hub.
      globalThis.fetch = (async (input: unknown) => {
        requests.push(`fetch ${String(input)}`);
        throw new Error('network is not allowed in this spec');
      }) as typeof fetch;
      for (const module of [http, https]) {
        jest.spyOn(module, 'request').mockImplementation(((url: unknown) => {
          requests.push(`request ${String(url)}`);
          throw new Error('network is not allowed in this spec');
        }) as never);
        jest.spyOn(module, 'get').mockImplementation(((url: unknown) => {
          requests.push(`get ${String(url)}`);
          throw new Error('network is not allowed in this spec');
        }) as never);
      }
      const provider = createEmbeddingProvider(
        { provider: 'local-semantic', model: 'use-lite-512', dimensions: 512 },
        {},
      );
      vectors = await provider.embed([
        'How can I make lookups on a big table quicker?',
        'Creating an index on a column speeds up queries that filter on it.',
        'The museum opens at nine and closes at five on weekdays.',
        '   ',
      ]);
    }, 120_000);

    afterAll(() => {
      globalThis.fetch = realFetch;
      jest.restoreAllMocks();
    });

    it('loads and embeds without any network request', () => {
      expect(requests).toEqual([]);
    });

    it('returns one vector of 512 numbers of unit norm per text, blank ones included', () => {
      expect(vectors.map((v) => v.length)).toEqual([512, 512, 512, 512]);
      for (const v of vectors) expect(Math.abs(Math.sqrt(dot(v, v)) - 1)).toBeLessThan(1e-9);
    });

    it('puts a paraphrase closer than an unrelated sentence', () => {
      const [question, paraphrase, unrelated] = vectors;
      expect(dot(question, paraphrase)).toBeGreaterThan(dot(question, unrelated) + 0.1);
    });
  });

  describe('embed on worker threads', () => {
    afterAll(() => closeSemanticEmbeddingPools());

    it('gives the vectors of the calling thread, in order, from a pool of 2 threads', async () => {
      const texts = Array.from(
        { length: 20 },
        (_, i) => `Sentence number ${i} is about ${i % 2 ? 'indexes and tables' : 'backups and restores'}.`,
      );
      const inThread = await new LocalSemanticEmbeddingProvider().embed(texts);
      const pooled = await new LocalSemanticEmbeddingProvider({ threads: 2 }).embed(texts);
      expect(pooled).toHaveLength(20);
      const worst = Math.max(...pooled.map((v, i) => Math.max(...v.map((x, j) => Math.abs(x - inThread[i][j])))));
      expect(worst).toBeLessThan(1e-6);
    }, 120_000);
  });

  describe('constructor', () => {
    it('refuses any length but 512', () => {
      expect(() => new LocalSemanticEmbeddingProvider({ dimensions: 256 })).toThrow(RangeError);
      expect(new LocalSemanticEmbeddingProvider({ dimensions: LOCAL_SEMANTIC_DIMENSIONS }).dimensions).toBe(512);
    });

    it('refuses a thread count that is not an integer ≥ 1', () => {
      expect(() => new LocalSemanticEmbeddingProvider({ threads: 0 })).toThrow(RangeError);
      expect(() => new LocalSemanticEmbeddingProvider({ threads: 1.5 })).toThrow(RangeError);
      expect(new LocalSemanticEmbeddingProvider({ threads: 2 }).threads).toBe(2);
    });

    it('covers English only unless the project allows other languages', () => {
      expect(new LocalSemanticEmbeddingProvider().languages).toEqual(['en']);
      expect(new LocalSemanticEmbeddingProvider({ allowOtherLanguages: true }).languages).toBeUndefined();
    });
  });
});
