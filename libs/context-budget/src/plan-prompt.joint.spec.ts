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

  it('judges an item by its relevance evidence when it carries one (the one judgement), not by its cosine', () => {
    // Cosine 0.9 but coverage 0.2: low-relevance under the floor 0.46; cosine 0.1 but coverage 0.7: the floor item.
    const plan = planPrompt(
      input({
        window: 200_000,
        exact: true,
        maxTokens: 2048,
        items: [
          { id: 'k1', kind: 'knowledge', score: 0.9, relevance: 0.2, tokens: 315 },
          { id: 'k2', kind: 'knowledge', score: 0.1, relevance: 0.7, tokens: 315 },
        ],
        relevance: { floor: 0.46, cosineWeight: 0, below: 'never' },
      }),
    );
    expect(sets(plan)).toMatchObject({ keptItems: ['k2'], reasons: { k1: 'excluded', k2: 'floor' } });
    expect(plan.relevanceFloor).toBe(0.46);
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

  it("keeps a relevant chunk before the oldest summaries when they no longer fit memory's share (150 pairs, per-turn)", () => {
    // Floor chunk 315; 4,984 left, memory's share ⌊4,984 / 3⌋ = 1,661: 20 + 41 × 40 = 1,660 (t110…t150).
    // k2 (315) next; the rest of the coverage in 3,009 + 1,660 = 4,669: 20 + 116 × 40 = 4,660
    // (t35…t150), t1…t34 dropped; the share left t1…t109 out, so the summary job rolls them into the
    // session summary (evictedUpTo t109): the next asks carry them there, not nowhere.
    const plan = planPrompt(input({ history: pairs(150), items: chunks(0.5, 0.3) }));
    expect(sets(plan)).toEqual({
      verbatim: [],
      summarised: range(35, 150),
      compacted: [],
      dropped: range(1, 34),
      keptItems: ['k1', 'k2'],
      reasons: { k1: 'floor', k2: 'relevant' },
      used: 500 + 40 + 630 + 4660,
    });
    expect([plan.memoryRoom, plan.evictedUpTo]).toEqual([1661, 't109']);
  });

  it('the next ask of that session: the session summary for t1…t111, every pair represented, both chunks kept, t141…t150 verbatim', () => {
    // Share 1,661: 20 + 300 + 33 × 40 = 1,640 (t118…t150) represents 144 pairs against 41 lines.
    // k2; the rest in 3,029 + 1,640 = 4,669: t112…t150 all as lines (320 + 39 × 40 = 1,880), then
    // 10 upgrades to verbatim (+260 each: t141…t150), 189 left. The share still left t112…t117 out:
    // they roll next (evictedUpTo t117), so the session summary keeps pace with the session.
    const plan = planPrompt(
      input({
        history: pairs(150),
        items: chunks(0.5, 0.3),
        memory: { mode: 'per-turn', headerTokens: 20, sessionSummary: { tokens: 300, coversUpTo: 't111' } },
      }),
    );
    expect(sets(plan)).toEqual({
      verbatim: range(141, 150),
      summarised: range(112, 140),
      compacted: range(1, 111),
      dropped: [],
      keptItems: ['k1', 'k2'],
      reasons: { k1: 'floor', k2: 'relevant' },
      used: 500 + 40 + 630 + 1880 + 2600,
    });
    expect(plan.evictedUpTo).toBe('t117');
  });

  it('keeps the answering chunk ranked 7th against 30 Chinese summary lines of 110 tokens (8K, max_tokens 2,048)', () => {
    // Available 8,192 − 2,048 − 600 − 1,229 = 4,315; room 4,285 after the 30-token question. Floor
    // chunk 360; 3,925 left, share 1,308: 20 + 11 × 110 = 1,230 (t20…t30). k2…k8 (7 × 360 = 2,520)
    // all fit; the rest of the coverage in 175 + 1,230: 12 lines (t19…t30), t1…t18 dropped this ask
    // and rolled into the session summary (evictedUpTo t19). Before the share the 30 lines (3,320)
    // came first and only the floor chunk fitted.
    const plan = planPrompt(
      input({
        maxTokens: 2048,
        questionTokens: 30,
        history: pairs(30, 60, 240, 110),
        items: chunks(0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.11, 0.1).map((c) => ({ ...c, tokens: 360 })),
        relevance: { floor: 0.04, below: 'spare-room' },
      }),
    );
    expect(sets(plan)).toEqual({
      verbatim: [],
      summarised: range(19, 30),
      compacted: [],
      dropped: range(1, 18),
      keptItems: ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8'],
      reasons: {
        k1: 'floor',
        k2: 'relevant',
        k3: 'relevant',
        k4: 'relevant',
        k5: 'relevant',
        k6: 'relevant',
        k7: 'relevant',
        k8: 'relevant',
      },
      used: 500 + 30 + 2880 + 1340,
    });
    expect([plan.memoryRoom, plan.evictedUpTo]).toEqual([1308, 't19']);
  });

  it('compaction: the session summary for t1…t40, lines for t43…t150, both chunks, and every line rolled next (150 pairs)', () => {
    // Share 1,661: 20 + 300 + 33 lines (t118…t150) = 1,640, 73 pairs against 41 lines. k2; the rest in
    // 3,029 + 1,640 = 4,669: 320 + 108 × 40 = 4,640 (t43…t150), t41…t42 dropped. Compaction rolls
    // every pair sent as a line: evictedUpTo t150.
    const plan = planPrompt(
      input({
        history: pairs(150),
        items: chunks(0.5, 0.3),
        memory: { mode: 'compaction', headerTokens: 20, sessionSummary: { tokens: 300, coversUpTo: 't40' } },
      }),
    );
    expect(sets(plan)).toEqual({
      verbatim: [],
      summarised: range(43, 150),
      compacted: range(1, 40),
      dropped: ['t41', 't42'],
      keptItems: ['k1', 'k2'],
      reasons: { k1: 'floor', k2: 'relevant' },
      used: 500 + 40 + 630 + 4640,
    });
    expect(plan.evictedUpTo).toBe('t150');
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
