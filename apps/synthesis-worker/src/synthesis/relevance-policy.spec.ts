import { relevancePolicy } from './relevance-policy';

describe(relevancePolicy.name, () => {
  const lexical = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;

  it.each([
    ['the default method (hybrid) and policy', null, { floor: 0.46, cosineWeight: 0, below: 'spare-room' }],
    ['`never`', { method: 'fulltext', lowRelevance: 'never' }, { floor: 0.46, cosineWeight: 0, below: 'never' }],
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
