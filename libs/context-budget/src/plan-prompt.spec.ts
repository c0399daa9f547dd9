import { AskError, isAskError } from '@ask/ask-errors';
import { assembleMessages } from './assemble';
import { planPrompt, type PlanInput } from './plan-prompt';
import type { ContextItemCost, HistoryTurn } from './trim';

/** n earlier pairs of `questionTokens` + `answerTokens`, ids t1 (oldest) … tn (newest). */
const session = (n: number, questionTokens: number, answerTokens: number): HistoryTurn[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, questionTokens, answerTokens }));

/** Window 8192, approximate counter, max_tokens 1024: 5339 tokens available (issue 3). */
const small = (over: Partial<PlanInput>): PlanInput => ({
  model: 'llama3:8b',
  window: 8192,
  maxTokens: 1024,
  exact: false,
  systemPromptTokens: 500,
  questionTokens: 400,
  history: [],
  items: [],
  ...over,
});

/** Runs `fn`, expecting it to throw; returns what it threw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe(planPrompt.name, () => {
  it('keeps 4 of 20 pairs of 1000 tokens with a 400-token question and one 200-token item (window 8192)', () => {
    const plan = planPrompt(
      small({ history: session(20, 200, 800), items: [{ id: 'i1', kind: 'insight', score: 0.8, tokens: 200 }] }),
    );
    expect(plan).toEqual({
      window: 8192,
      maxTokens: 1024,
      reserve: 600,
      margin: 1229,
      available: 5339,
      exact: false,
      historyBudget: 4739,
      used: 500 + 4000 + 200 + 400,
      keptTurnIds: ['t17', 't18', 't19', 't20'],
      turnsKept: 4,
      turnsDropped: 16,
      turnsSummarised: 0,
      turnsCompacted: 0,
      memory: {
        mode: 'off',
        verbatimTurnIds: ['t17', 't18', 't19', 't20'],
        summarisedTurnIds: [],
        compactedTurnIds: [],
        droppedTurnIds: Array.from({ length: 16 }, (_, i) => `t${i + 1}`),
        sessionSummaryTokens: 0,
        memoryTokens: 0,
        tokens: 4000,
      },
      keptItemIds: ['i1'],
      droppedItemIds: [],
      contextKept: 1,
      contextDropped: 0,
      items: [{ id: 'i1', kind: 'insight', score: 0.8, tokens: 200, kept: true, reason: 'fits' }],
      relevanceFloor: null,
      memoryRoom: 0,
      evictedUpTo: null,
    });
  });

  it.each([
    ['gpt-4o', 128000, true, 118952],
    ['an unknown model on a custom base_url', 32000, false, 24552],
    ['an unknown Ollama model', 128000, false, 106152],
    ['mistral:7b', 32768, false, 25204],
  ])('budgets %s (window %i, exact %p) at %i available tokens', (model, window, exact, available) => {
    const plan = planPrompt({
      model,
      window,
      exact,
      systemPromptTokens: 300,
      questionTokens: 10,
      history: [],
      items: [],
    });
    expect(plan.available).toBe(available);
    expect(plan.historyBudget).toBe(available - 10);
  });

  it('keeps the newer pairs when the oldest answer alone is larger than the whole budget', () => {
    const history = [{ id: 'old', questionTokens: 20, answerTokens: 6000 }, ...session(3, 300, 700)];
    const plan = planPrompt(small({ questionTokens: 100, history }));
    expect(plan.keptTurnIds).toEqual(['t1', 't2', 't3']);
    expect(plan).toMatchObject({ turnsKept: 3, turnsDropped: 1, used: 500 + 3000 + 100 });
  });

  it('sends no pair and no lone answer for [user A 3000, assistant A′ 200] + question B 100 with 1000 tokens of history budget', () => {
    // window 4000 approximate, max_tokens 1700: available 1100; question 100 leaves 1000 for history.
    const plan = planPrompt({
      model: 'm',
      window: 4000,
      maxTokens: 1700,
      exact: false,
      systemPromptTokens: 200,
      questionTokens: 100,
      history: [{ id: 'A', questionTokens: 3000, answerTokens: 200 }],
      items: [],
    });
    expect(plan).toMatchObject({
      available: 1100,
      historyBudget: 1000,
      keptTurnIds: [],
      turnsKept: 0,
      turnsDropped: 1,
    });
    const messages = assembleMessages({ systemPrompt: 'sys', contextItems: [], history: [], question: 'B?' });
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('answers 413 for a question larger than available, leaving the session untouched', () => {
    const input = deepFreeze(small({ questionTokens: 6000, history: session(3, 10, 10) }));
    const before = JSON.stringify(input);
    const err = thrown(() => planPrompt(input));
    expect(isAskError(err)).toBe(true);
    expect((err as AskError).toEvent()).toEqual({
      status: 413,
      code: 'context_overflow',
      error: "this conversation has grown past the model's context window",
      details: 'model=llama3:8b window=8192 question=6000 rag=0 knowledge=0',
    });
    expect(JSON.stringify(input)).toBe(before);
  });

  it('drops 8 items scored 0.9 … 0.2 lowest first until they fit, then packs history into what is left', () => {
    const scores = [0.4, 0.9, 0.2, 0.7, 0.5, 0.8, 0.3, 0.6];
    const items: ContextItemCost[] = scores.map((score) => ({
      id: `s${score * 10}`,
      kind: 'insight',
      score,
      tokens: 1000,
    }));
    // 5339 − 400 = 4939 for items: 4 of 1000 fit, leaving 939 for history: one pair of 800.
    const plan = planPrompt(small({ items, history: session(5, 300, 500) }));
    expect(plan).toMatchObject({
      keptItemIds: ['s9', 's8', 's7', 's6'],
      droppedItemIds: ['s5', 's4', 's3', 's2'],
      contextKept: 4,
      contextDropped: 4,
      historyBudget: 939,
      keptTurnIds: ['t5'],
      used: 500 + 400 + 4000 + 800,
    });
  });

  it('answers 413 with the real figures when the one item left is still too large', () => {
    const items: ContextItemCost[] = [
      { id: 'big', kind: 'recommendation', score: 0.9, tokens: 6000 },
      { id: 'k', kind: 'knowledge', score: 0.3, tokens: 3000 },
      { id: 'i', kind: 'insight', score: 0.5, tokens: 2000 },
    ];
    const err = thrown(() => planPrompt(small({ items })));
    expect((err as AskError).status).toBe(413);
    expect((err as AskError).details).toBe('model=llama3:8b window=8192 question=400 rag=6000 knowledge=0');
  });

  it('reports a lone knowledge chunk under knowledge', () => {
    const items: ContextItemCost[] = [{ id: 'k', kind: 'knowledge', score: 0.9, tokens: 7000 }];
    expect((thrown(() => planPrompt(small({ items }))) as AskError).details).toBe(
      'model=llama3:8b window=8192 question=400 rag=0 knowledge=7000',
    );
  });

  it("reproduces the seed's sample 413 body when a huge system prompt leaves no room", () => {
    // Claude direct, exact: available 187352; the system prompt's 186400 tokens beyond the reserve leave 952 − 12.
    const err = thrown(() =>
      planPrompt({
        model: 'claude-sonnet-4-6',
        window: 200000,
        exact: true,
        systemPromptTokens: 187000,
        questionTokens: 12,
        history: [],
        items: [{ id: 'i', kind: 'insight', score: 0.7, tokens: 1200 }],
      }),
    ) as AskError;
    expect(err.toBody()).toEqual({
      error: "this conversation has grown past the model's context window",
      code: 'context_overflow',
      details: 'model=claude-sonnet-4-6 window=200000 question=12 rag=1200 knowledge=0',
    });
  });

  it('counts the system prompt beyond the reserve against available, and never drops it', () => {
    const plan = planPrompt(small({ systemPromptTokens: 1600, history: session(20, 200, 800) }));
    // 5339 − (1600 − 600) − 400 = 3939: three pairs.
    expect(plan).toMatchObject({ historyBudget: 3939, turnsKept: 3, used: 1600 + 3000 + 400 });
  });

  it('counts per-message and per-request framing', () => {
    const plan = planPrompt(
      small({
        systemPromptTokens: 100,
        perMessageTokens: 4,
        perRequestTokens: 3,
        history: session(20, 196, 796),
        items: [{ id: 'i1', kind: 'insight', score: 0.8, tokens: 196 }],
        questionTokens: 396,
      }),
    );
    // system 100+4+3 fits the reserve; question 396+4; room 5339 − 400 = 4939; item 196; history 4743 → 4 pairs of 1000.
    expect(plan).toMatchObject({ historyBudget: 4743, turnsKept: 4, used: 107 + 400 + 196 + 4000 });
  });

  it.each([
    [undefined, 4],
    [20, 4],
    [6, 3],
    [5, 2],
    [1, 0],
    [0, 0],
  ])('caps history with maxHistoryMessages %p to %i pairs', (maxHistoryMessages, turnsKept) => {
    const plan = planPrompt(small({ history: session(20, 200, 800), maxHistoryMessages }));
    expect(plan.turnsKept).toBe(turnsKept);
  });

  it.each([
    ['a negative question count', { questionTokens: -1 }],
    ['a fractional item count', { items: [{ id: 'x', kind: 'insight' as const, score: 1, tokens: 1.5 }] }],
    ['a NaN score', { items: [{ id: 'x', kind: 'insight' as const, score: Number.NaN, tokens: 1 }] }],
    ['a negative answer count', { history: [{ id: 'h', questionTokens: 1, answerTokens: -2 }] }],
    ['a fractional maxHistoryMessages', { maxHistoryMessages: 2.5 }],
    ['max_tokens as large as the window', { maxTokens: 8192 }],
    ['a history id used twice', { history: [...session(2, 1, 1), { id: 't1', questionTokens: 1, answerTokens: 1 }] }],
    [
      'an item id used twice',
      {
        items: [
          { id: 'x', kind: 'insight' as const, score: 0.5, tokens: 1 },
          { id: 'x', kind: 'knowledge' as const, score: 0.4, tokens: 1 },
        ],
      },
    ],
  ])('throws a RangeError, not a 413, for %s', (_label, over) => {
    expect(() => planPrompt(small(over))).toThrow(RangeError);
  });
});
