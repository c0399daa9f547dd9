import { shrinkContext, trimHistory, type ContextItemCost, type HistoryTurn } from './trim';

const pairs = (...costs: Array<[number, number]>): HistoryTurn[] =>
  costs.map(([questionTokens, answerTokens], i) => ({ id: `t${i + 1}`, questionTokens, answerTokens }));

describe(trimHistory.name, () => {
  it.each([
    // [case, history, budget, perMessage, maxPairs, kept ids, tokens]
    ['keeps everything that fits', pairs([10, 20], [30, 40]), 100, 0, Infinity, ['t1', 't2'], 100],
    ['keeps the newest suffix', pairs([10, 20], [30, 40], [50, 60]), 200, 0, Infinity, ['t2', 't3'], 180],
    ['stops at the first pair that does not fit', pairs([1, 1], [500, 500], [10, 10]), 100, 0, Infinity, ['t3'], 20],
    ['counts two framings per pair', pairs([10, 10], [10, 10]), 47, 4, Infinity, ['t2'], 28],
    ['applies the pair cap', pairs([1, 1], [1, 1], [1, 1]), 100, 0, 2, ['t2', 't3'], 4],
    ['keeps nothing with a zero cap', pairs([1, 1]), 100, 0, 0, [], 0],
    ['keeps nothing with a negative budget', pairs([1, 1]), -5, 0, Infinity, [], 0],
    ['keeps a pair that fits exactly', pairs([60, 40]), 100, 0, Infinity, ['t1'], 100],
    [
      'keeps no pair when the question alone of the only pair is too large (user A 3000, assistant 200, budget 1000)',
      pairs([3000, 200]),
      1000,
      0,
      Infinity,
      [],
      0,
    ],
  ] as Array<[string, HistoryTurn[], number, number, number, string[], number]>)(
    '%s',
    (_label, history, budget, perMessage, maxPairs, keptIds, tokens) => {
      const trimmed = trimHistory(history, budget, perMessage, maxPairs);
      expect(trimmed.kept.map((t) => t.id)).toEqual(keptIds);
      expect(trimmed.tokens).toBe(tokens);
    },
  );
});

const item = (
  id: string,
  score: number,
  tokens: number,
  kind: ContextItemCost['kind'] = 'insight',
): ContextItemCost => ({
  id,
  kind,
  score,
  tokens,
});

describe(shrinkContext.name, () => {
  it('ranks items best first, ties in retrieval order', () => {
    const shrunk = shrinkContext([item('a', 0.5, 1), item('b', 0.9, 1), item('c', 0.5, 1)], 100);
    expect(shrunk.kept.map((i) => i.id)).toEqual(['b', 'a', 'c']);
    expect(shrunk).toMatchObject({ dropped: [], tokens: 3, fits: true });
  });

  it('drops the lowest-scoring items until the rest fit', () => {
    const shrunk = shrinkContext([item('low', 0.2, 50), item('high', 0.9, 50), item('mid', 0.5, 50)], 100);
    expect(shrunk.kept.map((i) => i.id)).toEqual(['high', 'mid']);
    expect(shrunk.dropped.map((i) => i.id)).toEqual(['low']);
    expect(shrunk).toMatchObject({ tokens: 100, fits: true });
  });

  it('keeps one item, not fitting, when even the best is too large', () => {
    const shrunk = shrinkContext([item('a', 0.9, 500), item('b', 0.1, 10)], 100);
    expect(shrunk.kept.map((i) => i.id)).toEqual(['a']);
    expect(shrunk).toMatchObject({ tokens: 500, fits: false });
  });

  it('fits with no items unless the budget is negative', () => {
    expect(shrinkContext([], 0)).toEqual({ kept: [], dropped: [], tokens: 0, fits: true });
    expect(shrinkContext([], -1).fits).toBe(false);
  });
});
