import { budgetMemory } from './budget';

const plan = (ids: Partial<Record<'verbatim' | 'summarised' | 'compacted' | 'dropped', string[]>>) => ({
  memory: {
    mode: 'per-turn' as const,
    verbatimTurnIds: ids.verbatim ?? [],
    summarisedTurnIds: ids.summarised ?? [],
    compactedTurnIds: ids.compacted ?? [],
    droppedTurnIds: ids.dropped ?? [],
    sessionSummaryTokens: 0,
    memoryTokens: 120,
    tokens: 0,
  },
});

describe(budgetMemory.name, () => {
  const history = ['a', 'b', 'c', 'd', 'e', 'f'];
  it('gives each list as ranges of 1-based turn positions, oldest first, with the counts', () => {
    expect(budgetMemory(plan({ summarised: ['c', 'a', 'b'], verbatim: ['f', 'e'], dropped: ['d'] }), history)).toEqual({
      mode: 'per-turn',
      verbatimPairs: 2,
      summarisedPairs: 3,
      compactedPairs: 0,
      droppedPairs: 1,
      verbatim: [[5, 6]],
      summarised: [[1, 3]],
      compacted: [],
      dropped: [[4, 4]],
      sessionSummary: false,
      sessionSummaryTokens: 0,
      memoryTokens: 120,
    });
  });

  it('splits a list at its gaps and leaves out ids that are not in the history', () => {
    const got = budgetMemory(plan({ verbatim: ['a', 'c', 'd', 'f', 'zz'] }), history);
    expect(got.verbatim).toEqual([
      [1, 1],
      [3, 4],
      [6, 6],
    ]);
    expect(got.verbatimPairs).toBe(5);
  });
});
