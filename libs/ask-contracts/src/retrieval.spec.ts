import { citedSources, defaultFusionWeights, effectiveRetrieval, textSearchConfigForLanguage } from './retrieval';

describe('retrieval defaults', () => {
  it.each([
    ['en', 'english'],
    ['de', 'german'],
    ['nb', 'norwegian'],
    ['PT', 'portuguese'],
    ['zh', 'simple'],
    ['la', 'simple'],
    [null, 'simple'],
    [undefined, 'simple'],
  ])('language %s → text search configuration %s', (language, config) => {
    expect(textSearchConfigForLanguage(language)).toBe(config);
  });

  it('weights per embedder: lexical 0.5 / 1, semantic 1 / 1', () => {
    expect(defaultFusionWeights('local')).toEqual({ vectorWeight: 0.5, fulltextWeight: 1 });
    expect(defaultFusionWeights('local-semantic')).toEqual({ vectorWeight: 1, fulltextWeight: 1 });
    expect(defaultFusionWeights('openai')).toEqual({ vectorWeight: 1, fulltextWeight: 1 });
  });

  it('fills in the method, the embedder weights and the configuration in force; explicit settings win', () => {
    expect(effectiveRetrieval(null, { embeddingProvider: 'local', textSearchConfig: 'english' })).toEqual({
      method: 'hybrid',
      vectorWeight: 0.5,
      fulltextWeight: 1,
      textSearchConfig: 'english',
    });
    expect(
      effectiveRetrieval(
        { vectorWeight: 2, textSearchConfig: 'simple' },
        { embeddingProvider: 'local-semantic', textSearchConfig: 'english' },
      ),
    ).toEqual({
      method: 'hybrid',
      vectorWeight: 2,
      fulltextWeight: 1,
      textSearchConfig: 'simple',
    });
    expect(effectiveRetrieval(undefined).textSearchConfig).toBe('simple');
  });
});

describe('citedSources', () => {
  it('lists each page once, under its best chunk, in the items order; insights and source-less chunks as they are', () => {
    const chunk = (id: string, source?: string) => ({ kind: 'knowledge', id, title: `T ${source ?? id}`, source });
    expect(
      citedSources([
        chunk('c1', 'manual/vacuum.html'),
        { kind: 'insight', id: 'i1', title: 'Insight' },
        chunk('c2', 'manual/vacuum.html'),
        chunk('c3', 'manual/analyze.html'),
        chunk('c4'),
        chunk('c5', 'manual/vacuum.html'),
        chunk('c6'),
      ]).map((s) => s.id),
    ).toEqual(['c1', 'i1', 'c3', 'c4', 'c6']);
  });
});
