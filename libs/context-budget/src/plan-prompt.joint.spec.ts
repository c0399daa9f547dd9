import { planPrompt, type PlanInput } from './plan-prompt';
import type { MemoryTurn } from './plan-memory';
import { shrinkContext, trimHistory, type ContextItemCost } from './trim';

/**
 * Issue 32: one budget where history, summaries and retrieved items compete by value. The figures
 * follow the turn 31: 8,192-token window (approximate counter, max_tokens 1024: 5,339
 * available), a 40-token question, pairs of 60 + 240 tokens with 40-token summaries, a 20-token
 * memory header, chunks of 315 tokens (8 of them: the median 2,518), relevance floor 0.175
 * (`local-lexical-v1`). Room for history and items: 5,339 − 40 = 5,299.
 */
const pairs = (n: number, question = 60, answer = 240, summary = 40): MemoryTurn[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `t${i + 1}`,
    questionTokens: question,
    answerTokens: answer,
    summaryTokens: summary,
  }));

const chunks = (...scores: number[]): ContextItemCost[] =>
  scores.map((score, i) => ({ id: `k${i + 1}`, kind: 'knowledge', score, tokens: 315 }));

const range = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => `t${from + i}`);

const input = (over: Partial<PlanInput>): PlanInput => ({
  model: 'llama3:8b',
  window: 8192,
  maxTokens: 1024,
  exact: false,
  systemPromptTokens: 500,
  questionTokens: 40,
  history: pairs(30),
  items: [],
  memory: { mode: 'per-turn', headerTokens: 20 },
  relevance: { floor: 0.175, below: 'spare-room' },
  ...over,
});

/** The parts of a plan these cases pin down. */
const sets = (plan: ReturnType<typeof planPrompt>) => ({
  verbatim: plan.memory.verbatimTurnIds,
  summarised: plan.memory.summarisedTurnIds,
  compacted: plan.memory.compactedTurnIds,
  dropped: plan.memory.droppedTurnIds,
  keptItems: plan.keptItemIds,
  reasons: Object.fromEntries(plan.items.map((d) => [d.id, d.reason])),
  used: plan.used,
});

const IRRELEVANT = [0.14, 0.13, 0.12, 0.11, 0.1, 0.09, 0.08, 0.07];

describe(`${planPrompt.name}: one budget (issue 32)`, () => {
  it('sends memory, not 8 chunks below the floor (issue 32 turn 31): t16…t30 verbatim, t1…t15 summarised, no chunk', () => {
    // Coverage 20 + 30 × 40 = 1,220; 15 upgrades of 260 = 3,900; 179 left, less than one chunk.
    const plan = planPrompt(input({ items: chunks(...IRRELEVANT) }));
    expect(sets(plan)).toEqual({
      verbatim: range(16, 30),
      summarised: range(1, 15),
      compacted: [],
      dropped: [],
      keptItems: [],
      reasons: Object.fromEntries(IRRELEVANT.map((_, i) => [`k${i + 1}`, 'below-floor'])),
      used: 500 + 40 + 1220 + 3900,
    });
    expect(plan.relevanceFloor).toBe(0.175);
  });

  it('leaves chunks below the floor out entirely with the project setting `never`, even in a 200K window', () => {
    const plan = planPrompt(
      input({
        window: 200_000,
        exact: true,
        maxTokens: 2048,
        items: chunks(0.3, 0.1),
        relevance: { floor: 0.175, below: 'never' },
      }),
    );
    expect(sets(plan)).toMatchObject({
      verbatim: range(1, 30),
      keptItems: ['k1'],
      reasons: { k1: 'floor', k2: 'excluded' },
    });
  });

  it('keeps relevant chunks before verbatim pairs, after every pair is represented: 5 of 8 chunks, t22…t30 verbatim', () => {
    // Floor chunk 315; coverage 1,220; 4 more relevant chunks 1,260; 9 upgrades of 260 = 2,340; 164 left.
    const plan = planPrompt(input({ items: chunks(0.45, 0.4, 0.33, 0.3, 0.21, 0.15, 0.12, 0.1) }));
    expect(sets(plan)).toEqual({
      verbatim: range(22, 30),
      summarised: range(1, 21),
      compacted: [],
      dropped: [],
      keptItems: ['k1', 'k2', 'k3', 'k4', 'k5'],
      reasons: {
        k1: 'floor',
        k2: 'relevant',
        k3: 'relevant',
        k4: 'relevant',
        k5: 'relevant',
        k6: 'below-floor',
        k7: 'below-floor',
        k8: 'below-floor',
      },
      used: 500 + 40 + 315 + 1220 + 1260 + 2340,
    });
  });

  it('drops the oldest summaries, never a newer one, when the summaries no longer fit (150 pairs, per-turn)', () => {
    // Floor chunk 315; 4,984 left: 20 + 124 × 40 = 4,980, so t27…t150 summarised, t1…t26 dropped
    // (the next compaction rolls them into the session summary); no room for k2 nor for a verbatim pair.
    const plan = planPrompt(input({ history: pairs(150), items: chunks(0.5, 0.3) }));
    expect(sets(plan)).toEqual({
      verbatim: [],
      summarised: range(27, 150),
      compacted: [],
      dropped: range(1, 26),
      keptItems: ['k1'],
      reasons: { k1: 'floor', k2: 'no-room' },
      used: 500 + 40 + 315 + 4980,
    });
  });

  it('represents all 150 pairs with the session summary for t1…t40 in compaction, the newest pair verbatim', () => {
    // 20 + 300 + 110 × 40 = 4,720 of 4,984; k2 (315) does not fit in 264; t150 verbatim (+260).
    const plan = planPrompt(
      input({
        history: pairs(150),
        items: chunks(0.5, 0.3),
        memory: { mode: 'compaction', headerTokens: 20, sessionSummary: { tokens: 300, coversUpTo: 't40' } },
      }),
    );
    expect(sets(plan)).toEqual({
      verbatim: ['t150'],
      summarised: range(41, 149),
      compacted: range(1, 40),
      dropped: [],
      keptItems: ['k1'],
      reasons: { k1: 'floor', k2: 'no-room' },
      used: 500 + 40 + 315 + 4720 + 260,
    });
  });

  it('fills a 200K window: 400 pairs of 600, 6 relevant chunks kept, t99…t400 verbatim, the 2 below the floor left out', () => {
    // Available 200,000 − 2,048 − 600 − 10,000 = 187,352; room 187,312. Floor chunk 315, coverage
    // 20 + 400 × 40 = 16,020, 5 chunks 1,575, 302 upgrades of 560 = 169,120; 282 left.
    const plan = planPrompt(
      input({
        window: 200_000,
        exact: true,
        maxTokens: 2048,
        history: pairs(400, 100, 500),
        items: chunks(0.6, 0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1),
      }),
    );
    expect(sets(plan)).toEqual({
      verbatim: range(99, 400),
      summarised: range(1, 98),
      compacted: [],
      dropped: [],
      keptItems: ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'],
      reasons: {
        k1: 'floor',
        k2: 'relevant',
        k3: 'relevant',
        k4: 'relevant',
        k5: 'relevant',
        k6: 'relevant',
        k7: 'below-floor',
        k8: 'below-floor',
      },
      used: 500 + 40 + 315 + 16020 + 1575 + 169120,
    });
  });

  it('with memory off is exactly the seed: items shrunk to fit alone, history trimmed newest first into what is left', () => {
    const history = pairs(30);
    const items = chunks(...IRRELEVANT);
    const plan = planPrompt(input({ history, items, memory: { mode: 'off', headerTokens: 20 } }));
    // The seed's two stages, computed on their own: room 5,299.
    const context = shrinkContext(items, 5299);
    const trimmed = trimHistory(history, 5299 - context.tokens);
    expect(plan.keptItemIds).toEqual(context.kept.map((i) => i.id));
    expect(plan.keptTurnIds).toEqual(trimmed.kept.map((t) => t.id));
    expect(sets(plan)).toEqual({
      verbatim: range(22, 30),
      summarised: [],
      compacted: [],
      dropped: range(1, 21),
      keptItems: IRRELEVANT.map((_, i) => `k${i + 1}`),
      reasons: Object.fromEntries(IRRELEVANT.map((_, i) => [`k${i + 1}`, 'fits'])),
      used: 500 + 40 + 2520 + 2700,
    });
  });

  it('keeps the floor of one relevant item and answers 413 when even that does not fit with the question', () => {
    const fits = planPrompt(input({ history: pairs(30, 60, 240, 400), items: chunks(0.5) }));
    expect(fits.keptItemIds).toEqual(['k1']);
    expect(() => planPrompt(input({ questionTokens: 5100, items: chunks(0.5) }))).toThrow(
      expect.objectContaining({ status: 413, code: 'context_overflow' }),
    );
    // Below the floor nothing is owed to the items: the question alone decides.
    expect(planPrompt(input({ questionTokens: 5100, items: chunks(0.1) })).keptItemIds).toEqual([]);
  });
});
