import type { BudgetEvent, BudgetMemory } from '@ask/ask-contracts';
import type { SessionUsage, StoredMessage, UsageFigures } from './api';
import { barLabel, sessionPicture } from './picture';

const figures = (calls: number, costUsd: string): UsageFigures => ({
  calls,
  inputTokens: 100 * calls,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 10 * calls,
  reasoningTokens: 0,
  costUsd,
  unpricedCalls: 0,
});

const memory = (over: Partial<BudgetMemory>): BudgetMemory => ({
  mode: 'per-turn',
  verbatimPairs: 0,
  summarisedPairs: 0,
  compactedPairs: 0,
  droppedPairs: 0,
  verbatim: [],
  summarised: [],
  compacted: [],
  dropped: [],
  sessionSummary: false,
  sessionSummaryTokens: 0,
  memoryTokens: 0,
  ...over,
});

const message = (n: number, budget: Partial<BudgetEvent> | null): StoredMessage => ({
  id: `m${n}`,
  askId: `a${n}`,
  question: `q${n}`,
  answer: `a${n}`,
  promptTokens: budget ? (budget.used ?? 0) - 1 : null,
  completionTokens: 5,
  model: 'local',
  budget: budget
    ? ({
        window: 2048,
        maxTokens: 512,
        reserve: 104,
        margin: 103,
        available: 1329,
        used: 800,
        turnsDropped: 0,
        keptTurnIds: [],
        ...budget,
      } as BudgetEvent)
    : null,
  sources: [],
});

const usage: SessionUsage = {
  sessionId: 's',
  asks: [
    { askId: 'a2', ...figures(2, '0.000200000000') },
    { askId: 'a1', ...figures(1, '0.000100000000') },
  ],
  totals: figures(4, '0.000400000000'),
};

describe('sessionPicture', () => {
  it("marks each turn by how the newest prompt carried it (memory ranges), and keeps each prompt's own marks", () => {
    const messages = [
      message(1, { used: 700 }),
      message(2, { used: 900, memory: memory({ verbatim: [[1, 1]] }) }),
      message(3, { used: 1000, memory: memory({ summarised: [[1, 1]], verbatim: [[2, 2]] }) }),
      message(4, {
        used: 1100,
        turnsDropped: 1,
        memory: memory({ dropped: [[1, 1]], summarised: [[2, 2]], verbatim: [[3, 3]] }),
      }),
    ];
    const picture = sessionPicture(messages, usage);
    expect(picture.bars.map((b) => [b.turn, b.used, b.fate, b.dropped, b.summarised])).toEqual([
      [1, 700, 'dropped', [], []],
      [2, 900, 'summarised', [], []],
      [3, 1000, 'verbatim', [], [[1, 1]]],
      [4, 1100, 'latest', [[1, 1]], [[2, 2]]],
    ]);
    // The ledger's figures by ask id, without the id; an ask the ledger has no calls for gets none.
    expect(picture.bars.map((b) => b.usage?.costUsd ?? null)).toEqual(['0.000100000000', '0.000200000000', null, null]);
    expect(picture.bars[0].usage).toEqual(figures(1, '0.000100000000'));
    expect(picture.totals).toBe(usage.totals);
    expect(barLabel(picture.bars[3])).toBe(
      'Turn 4: prompt 1,100 of 2,048 tokens (input limit 1,433); its prompt dropped turn 1; summarised turn 2; the newest turn.',
    );
  });

  it('falls back to keptTurnIds for a budget stored before memory, and says when no budget was stored', () => {
    const messages = [message(1, null), message(2, { used: 500 }), message(3, { used: 600, keptTurnIds: ['m2'] })];
    const picture = sessionPicture(messages, usage);
    expect(picture.bars.map((b) => [b.used, b.window, b.promptTokens, b.fate])).toEqual([
      [null, null, null, 'dropped'],
      [500, 2048, 499, 'verbatim'],
      [600, 2048, 599, 'latest'],
    ]);
    expect(barLabel(picture.bars[0])).toBe('Turn 1: no budget stored; cost $0.0001; dropped from the newest prompt.');
  });
});
