import { planMemory, type MemoryMode, type MemoryTurn } from './plan-memory';

/** Pairs t1…tn of `[question, answer, summary?]` tokens, oldest first. */
const pairs = (...costs: Array<[number, number, number?]>): MemoryTurn[] =>
  costs.map(([questionTokens, answerTokens, summaryTokens], i) => ({
    id: `t${i + 1}`,
    questionTokens,
    answerTokens,
    ...(summaryTokens !== undefined ? { summaryTokens } : {}),
  }));

/** n pairs of 50 + 50 tokens, each with a 20-token summary. */
const uniform = (n: number): MemoryTurn[] =>
  pairs(...Array.from({ length: n }, () => [50, 50, 20] as [number, number, number]));

/** n pairs of 50 + 50 tokens, each with a 40-token summary. */
const long = (n: number): MemoryTurn[] =>
  pairs(...Array.from({ length: n }, () => [50, 50, 40] as [number, number, number]));

/** n pairs of 50 + 50 tokens, each with a 5-token summary. */
const short = (n: number): MemoryTurn[] =>
  pairs(...Array.from({ length: n }, () => [50, 50, 5] as [number, number, number]));

const range = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => `t${from + i}`);

describe(planMemory.name, () => {
  describe('per-turn', () => {
    it.each([
      // [case, history, budget, verbatim, summarised, dropped, tokens]
      ['sends everything verbatim when it fits', uniform(3), 300, range(1, 3), [], [], 300],
      [
        'turns 1–12 summarised, 13–18 verbatim (18 pairs of 100, summaries of 5, budget 699)',
        short(18),
        699,
        range(13, 18),
        range(1, 12),
        [],
        600 + 5 + 12 * 5,
      ],
      [
        'holds room for every older summary (18 pairs of 100, summaries of 20, budget 760)',
        uniform(18),
        760,
        range(15, 18),
        range(1, 14),
        [],
        400 + 5 + 14 * 20,
      ],
      [
        'represents the newest 14 as summaries rather than 3 verbatim when the summaries cannot all fit (18 pairs, summaries of 20, budget 300)',
        uniform(18),
        300,
        [],
        range(5, 18),
        range(1, 4),
        5 + 14 * 20,
      ],
      [
        'never drops 15 summaries to keep the newest pair verbatim (issue 32: 18 pairs of 100, summaries of 20, budget 380)',
        uniform(18),
        380,
        [],
        range(1, 18),
        [],
        5 + 18 * 20,
      ],
      [
        'stops summarising at the first pair without a summary',
        pairs([50, 50, 20], [50, 50], [50, 50, 20], [50, 50, 20]),
        250,
        ['t3', 't4'],
        [],
        ['t1', 't2'],
        200,
      ],
      [
        'summarises an oversize pair, then goes on summarising',
        pairs([50, 50, 20], [900, 900, 30], [50, 50, 20]),
        200,
        ['t3'],
        ['t1', 't2'],
        [],
        100 + 5 + 30 + 20,
      ],
      ['keeps nothing with a negative budget', uniform(2), -1, [], [], ['t1', 't2'], 0],
    ] as Array<[string, MemoryTurn[], number, string[], string[], string[], number]>)(
      '%s',
      (_label, history, budget, verbatim, summarised, dropped, tokens) => {
        const plan = planMemory({ history, budget, mode: 'per-turn', headerTokens: 5 });
        expect(plan.verbatimTurnIds).toEqual(verbatim);
        expect(plan.summarisedTurnIds).toEqual(summarised);
        expect(plan.droppedTurnIds).toEqual(dropped);
        expect(plan.compactedTurnIds).toEqual([]);
        expect(plan.tokens).toBe(tokens);
        expect(plan.tokens).toBeLessThanOrEqual(Math.max(0, budget));
      },
    );

    it('charges the memory framing once (two messages: block and acknowledgement) and each verbatim pair two framings', () => {
      // 4 pairs, perMessage 3: verbatim pair 106, memory opening 2 × 3 + 5, summary 20: t3 verbatim
      // would leave no room for t1's and t2's summaries (212 + 11 + 40 = 263 > 250).
      const plan = planMemory({
        history: uniform(4),
        budget: 250,
        mode: 'per-turn',
        headerTokens: 5,
        perMessageTokens: 3,
      });
      expect(plan).toMatchObject({
        verbatimTurnIds: ['t4'],
        summarisedTurnIds: ['t1', 't2', 't3'],
        droppedTurnIds: [],
        memoryTokens: 71,
        tokens: 177,
      });
    });

    it('caps verbatim pairs with maxPairs and summarises the rest', () => {
      const plan = planMemory({ history: uniform(5), budget: 10_000, mode: 'per-turn', headerTokens: 5, maxPairs: 2 });
      expect(plan).toMatchObject({
        verbatimTurnIds: ['t4', 't5'],
        summarisedTurnIds: ['t1', 't2', 't3'],
        droppedTurnIds: [],
        tokens: 200 + 5 + 60,
      });
    });
  });

  describe('off', () => {
    it('is seed 000 trimming: summaries are never used', () => {
      const plan = planMemory({
        history: uniform(18),
        budget: 1000,
        mode: 'off',
        headerTokens: 5,
        sessionSummary: { tokens: 50, coversUpTo: 't6' },
      });
      expect(plan).toMatchObject({
        verbatimTurnIds: range(9, 18),
        summarisedTurnIds: [],
        compactedTurnIds: [],
        droppedTurnIds: range(1, 8),
        memoryTokens: 0,
        tokens: 1000,
      });
    });
  });

  describe('compaction', () => {
    it.each([
      // per-turn: every pair fits as its own line, so the session summary stays home.
      ['per-turn', range(13, 18), range(1, 12), [], 0, 665],
      // compaction: the session summary stands for t1…t6 (5 + 60), t7…t12 as lines (30), six upgrades of 95.
      ['compaction', range(13, 18), range(7, 12), range(1, 6), 60, 695],
    ] as Array<[MemoryMode, string[], string[], string[], number, number]>)(
      'with a session summary for t1…t6 and room for every line, %s sends verbatim %j',
      (mode, verbatim, summarised, compacted, session, tokens) => {
        const plan = planMemory({
          history: short(18),
          budget: 699,
          mode,
          headerTokens: 5,
          sessionSummary: { tokens: 60, coversUpTo: 't6' },
        });
        expect(plan).toMatchObject({
          verbatimTurnIds: verbatim,
          summarisedTurnIds: summarised,
          compactedTurnIds: compacted,
          droppedTurnIds: [],
          sessionSummaryTokens: session,
          tokens,
        });
      },
    );

    it('per-turn falls back to the session summary when its lines no longer fit (30 pairs, summaries of 40, budget 1,000)', () => {
      const plan = planMemory({
        history: long(30),
        budget: 1000,
        mode: 'per-turn',
        headerTokens: 5,
        sessionSummary: { tokens: 150, coversUpTo: 't20' },
      });
      // As compaction below: 24 lines would leave t1…t6 out; the session summary represents all 30.
      expect(plan).toMatchObject({
        verbatimTurnIds: range(24, 30),
        summarisedTurnIds: range(21, 23),
        compactedTurnIds: range(1, 20),
        droppedTurnIds: [],
        tokens: 975,
      });
    });

    it('sends the session summary for t1…t20 when pairs would be dropped (30 pairs, summaries of 40, budget 1,000)', () => {
      const plan = planMemory({
        history: long(30),
        budget: 1000,
        mode: 'compaction',
        headerTokens: 5,
        sessionSummary: { tokens: 150, coversUpTo: 't20' },
      });
      // 5 + 150 = 155; t24…t30 verbatim (700) with room for t21…t23's summaries (120): 975.
      expect(plan).toMatchObject({
        verbatimTurnIds: range(24, 30),
        summarisedTurnIds: range(21, 23),
        compactedTurnIds: range(1, 20),
        droppedTurnIds: [],
        sessionSummaryTokens: 150,
        memoryTokens: 275,
        tokens: 975,
      });
    });

    it('prefers every pair represented (session summary + 20 summaries) over 8 verbatim pairs', () => {
      // 5 + 150 + t11…t30's summaries (800) = 955: no room left for a pair verbatim (+60).
      const plan = planMemory({
        history: long(30),
        budget: 1000,
        mode: 'compaction',
        headerTokens: 5,
        sessionSummary: { tokens: 150, coversUpTo: 't10' },
      });
      expect(plan).toMatchObject({
        verbatimTurnIds: [],
        summarisedTurnIds: range(11, 30),
        compactedTurnIds: range(1, 10),
        droppedTurnIds: [],
        tokens: 955,
      });
    });

    it.each([
      ['the session summary does not fit the budget', { tokens: 996, coversUpTo: 't20' }],
      ['it covers a pair this history does not hold', { tokens: 150, coversUpTo: 'gone' }],
      ['it would represent fewer pairs (20 + 2 against 24 summaries)', { tokens: 900, coversUpTo: 't20' }],
    ])('keeps the newest 24 summaries, the oldest 6 left out, when %s', (_label, sessionSummary) => {
      const plan = planMemory({ history: long(30), budget: 1000, mode: 'compaction', headerTokens: 5, sessionSummary });
      expect(plan).toMatchObject({
        verbatimTurnIds: [],
        summarisedTurnIds: range(7, 30),
        compactedTurnIds: [],
        droppedTurnIds: range(1, 6),
        sessionSummaryTokens: 0,
        tokens: 5 + 24 * 40,
      });
    });

    it.each(['off', 'per-turn', 'compaction'] as MemoryMode[])('partitions the history (%s)', (mode) => {
      const history = uniform(40);
      const plan = planMemory({
        history,
        budget: 1234,
        mode,
        headerTokens: 7,
        perMessageTokens: 4,
        sessionSummary: { tokens: 99, coversUpTo: 't15' },
      });
      const all = [
        ...plan.compactedTurnIds,
        ...plan.droppedTurnIds,
        ...plan.summarisedTurnIds,
        ...plan.verbatimTurnIds,
      ].sort();
      expect(all).toEqual(history.map((t) => t.id).sort());
      expect(plan.tokens).toBeLessThanOrEqual(1234);
    });
  });
});
