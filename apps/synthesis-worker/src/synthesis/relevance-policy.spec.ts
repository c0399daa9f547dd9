import { relevancePolicy, standInRelevance } from './relevance-policy';

describe(relevancePolicy.name, () => {
  const lexical = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;

  it.each([
    ['the default method (hybrid) and policy', null, { floor: 0.34, cosineWeight: 0, below: 'spare-room' }],
    ['`never`', { method: 'fulltext', lowRelevance: 'never' }, { floor: 0.34, cosineWeight: 0, below: 'never' }],
  ] as const)('takes the lexical embedder’s judgement under %s', (_label, retrievalSettings, expected) => {
    expect(relevancePolicy({ embeddingSettings: lexical, retrievalSettings } as never)).toEqual(expected);
  });

  it('has none under vector retrieval alone (no full-text evidence to judge by)', () => {
    expect(
      relevancePolicy({ embeddingSettings: lexical, retrievalSettings: { method: 'vector' } } as never),
    ).toBeUndefined();
  });

  it('has none for an embedder nobody measured, or no embedder', () => {
    expect(
      relevancePolicy({
        embeddingSettings: { provider: 'openai', model: 'text-embedding-3-small', dimensions: 1536 },
        retrievalSettings: null,
      } as never),
    ).toBeUndefined();
    expect(relevancePolicy({ embeddingSettings: null, retrievalSettings: null } as never)).toBeUndefined();
  });
});

describe(standInRelevance.name, () => {
  const lexical = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;
  const item = (score: number, coverage?: number) => ({
    score,
    legs: {
      vector: { rank: 1, score },
      ...(coverage === undefined ? {} : { fulltext: { rank: 1, score: 1, coverage } }),
    },
  });

  it('says nothing relevant when no item covers 0.34 of the question, whatever the cosine (hybrid default)', () => {
    const project = { embeddingSettings: lexical, retrievalSettings: null } as never;
    expect(standInRelevance(project, [item(0.9, 0.3), item(0.8)])).toEqual({
      evidence: 0.3,
      below: 0.34,
      nothingRelevant: true,
    });
    expect(standInRelevance(project, [item(0.1, 0.5)])).toEqual({ evidence: 0.5, below: 0.34, nothingRelevant: false });
    expect(standInRelevance(project, [])).toEqual({ evidence: null, below: 0.34, nothingRelevant: true });
  });

  it('judges nothing under vector retrieval alone or for an embedder without a rule', () => {
    const vector = { embeddingSettings: lexical, retrievalSettings: { method: 'vector' } } as never;
    expect(standInRelevance(vector, [{ score: 0.1 }])).toBeUndefined();
    const remote = {
      embeddingSettings: { provider: 'openai', model: 'text-embedding-3-small', dimensions: 1536 },
      retrievalSettings: null,
    } as never;
    expect(standInRelevance(remote, [item(0.9, 0)])).toBeUndefined();
  });
});
