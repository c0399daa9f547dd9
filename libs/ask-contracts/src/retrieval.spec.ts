import {
  ABSTAIN_RULES,
  abstainsOn,
  citedSources,
  defaultFusionWeights,
  effectiveRetrieval,
  relevanceJudgement,
  textSearchConfigForLanguage,
} from './retrieval';

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

describe('the one relevance judgement', () => {
  it('is the fitted pair per embedder: absent lexemes count twice, below 0.34 lexical and 0.35 semantic', () => {
    expect(ABSTAIN_RULES).toEqual({
      'local-lexical-v1': { cosineWeight: 0, below: 0.34, absentWeight: 2 },
      'use-lite-512': { cosineWeight: 0, below: 0.35, absentWeight: 2 },
    });
  });

  it('abstains when no item covers the threshold (coverage as the full-text leg computed it)', () => {
    const item = (coverage: number) => ({ score: 0.9, legs: { fulltext: { rank: 1, score: 1, coverage } } });
    // A question of idf 3 + 3 + 4 whose 4 no row holds: a chunk holding both others covers
    // 6 / (10 + (2 − 1) · 4) = 0.4286 under absent weight 2 (0.6 on coverage alone).
    expect(abstainsOn([item(6 / 14)], ABSTAIN_RULES['local-lexical-v1'])).toBe(false);
    // Holding one of them: 3 / 14 = 0.2143 (0.3 on coverage alone): abstain under both embedders' rules.
    expect(relevanceJudgement([item(3 / 14)], 'local-lexical-v1', 'hybrid')).toEqual({
      evidence: 3 / 14,
      below: 0.34,
      nothingRelevant: true,
    });
    expect(relevanceJudgement([item(3 / 14)], 'use-lite-512', 'fulltext')?.nothingRelevant).toBe(true);
    expect(relevanceJudgement([item(3 / 14)], 'use-lite-512', 'vector')).toBeUndefined();
    expect(abstainsOn([], ABSTAIN_RULES['use-lite-512'])).toBe(true);
  });
});
