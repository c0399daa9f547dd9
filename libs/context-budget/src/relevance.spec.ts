import { RELEVANCE_FLOORS, relevanceFloor } from './relevance';

describe(relevanceFloor.name, () => {
  it.each([
    ['local-lexical-v1', 'vector', 0.16],
    ['local-lexical-v1', 'fulltext', 0.04],
    ['local-lexical-v1', 'hybrid', 0.04],
    ['use-lite-512', 'hybrid', undefined],
    ['text-embedding-3-small', 'vector', undefined],
    [undefined, 'vector', undefined],
  ] as const)('%s under %s: %s (bench/relevance)', (model, method, floor) => {
    expect(relevanceFloor(model, method)).toBe(floor);
  });

  it('holds a floor for every method of each embedder it names', () => {
    for (const floors of Object.values(RELEVANCE_FLOORS)) {
      expect(Object.keys(floors).sort()).toEqual(['fulltext', 'hybrid', 'vector']);
    }
  });
});
