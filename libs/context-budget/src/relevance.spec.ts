import { ABSTAIN_RULES } from '@ask/ask-contracts';
import { relevanceFloor } from './relevance';

describe(relevanceFloor.name, () => {
  it.each([
    ['local-lexical-v1', 'fulltext', { floor: 0.34, cosineWeight: 0 }],
    ['local-lexical-v1', 'hybrid', { floor: 0.34, cosineWeight: 0 }],
    ['use-lite-512', 'hybrid', { floor: 0.35, cosineWeight: 0 }],
    ['use-lite-512', 'fulltext', { floor: 0.35, cosineWeight: 0 }],
    ['local-lexical-v1', 'vector', undefined],
    ['use-lite-512', 'vector', undefined],
    ['text-embedding-3-small', 'hybrid', undefined],
    [undefined, 'hybrid', undefined],
  ] as const)('%s under %s: %j (the one relevance judgement)', (model, method, floor) => {
    expect(relevanceFloor(model, method)).toEqual(floor);
  });

  it('is the abstain rule of ask eval and the stand-in, for every embedder that has one', () => {
    for (const [model, rule] of Object.entries(ABSTAIN_RULES)) {
      expect(relevanceFloor(model, 'hybrid')).toEqual({ floor: rule.below, cosineWeight: rule.cosineWeight });
    }
  });
});
