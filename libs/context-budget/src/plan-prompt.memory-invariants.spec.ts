import { isAskError } from '@ask/ask-errors';
import { seededRandom } from '@ask/testing';
import type { MemoryTurn } from './plan-memory';
import { planPrompt, type PlanInput, type PromptPlan } from './plan-prompt';
import { shrinkContext, trimHistory, type ContextItemCost } from './trim';

const WINDOWS = [4096, 8192, 16384, 32000, 128000, 200000];
const MODES = ['off', 'per-turn', 'compaction'] as const;

/** One random session with summaries, a session summary and a relevance floor (issue 32). */
function randomInput(random: () => number): PlanInput {
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const window = WINDOWS[int(0, WINDOWS.length - 1)];
  const scale = window / 8192;
  const history: MemoryTurn[] = Array.from({ length: int(0, 60) }, (_, i) => {
    const questionTokens = int(1, Math.ceil(300 * scale));
    const answerTokens = int(1, Math.ceil(random() < 0.1 ? 8000 * scale : 900 * scale));
    return {
      id: `t${i}`,
      questionTokens,
      answerTokens,
      ...(random() < 0.9
        ? { summaryTokens: int(1, Math.max(1, Math.floor((questionTokens + answerTokens) * 0.7))) }
        : {}),
    };
  });
  const items: ContextItemCost[] = Array.from({ length: int(0, 10) }, (_, i) => ({
    id: `c${i}`,
    kind: 'knowledge',
    score: Math.round(random() * 100) / 100,
    tokens: int(1, Math.ceil(random() < 0.1 ? 6000 * scale : 600 * scale)),
  }));
  const mode = MODES[int(0, 2)];
  const covers = history.length > 1 ? history[int(0, history.length - 2)].id : undefined;
  return {
    model: `m-${window}`,
    window,
    maxTokens: int(1, Math.min(4096, window / 2)),
    exact: random() < 0.5,
    systemPromptTokens: int(0, 700),
    questionTokens: int(1, Math.ceil(random() < 0.1 ? 9000 * scale : 500 * scale)),
    history,
    items,
    perMessageTokens: int(0, 6),
    perRequestTokens: int(0, 4),
    maxHistoryMessages: random() < 0.2 ? int(0, 30) : undefined,
    memory: {
      mode,
      headerTokens: int(0, 30),
      ...(covers && random() < 0.7
        ? { sessionSummary: { tokens: int(1, Math.ceil(600 * scale)), coversUpTo: covers } }
        : {}),
    },
    ...(random() < 0.7
      ? { relevance: { floor: Math.round(random() * 60) / 100, below: random() < 0.8 ? 'spare-room' : 'never' } }
      : {}),
  } as PlanInput;
}

const SESSIONS = 3000;
const random = seededRandom(20261202);
const cases = Array.from({ length: SESSIONS }, () => randomInput(random));

describe(`${planPrompt.name} with memory: invariants over ${SESSIONS} seeded random sessions (issue 32)`, () => {
  const planned: Array<{ n: number; input: PlanInput; plan: PromptPlan }> = [];
  const overflowed: Array<{ n: number; input: PlanInput }> = [];
  cases.forEach((input, n) => {
    try {
      planned.push({ n, input, plan: planPrompt(input) });
    } catch (error) {
      if (!isAskError(error)) throw error;
      overflowed.push({ n, input });
    }
  });
  const failing = <T extends { n: number }>(list: T[], ok: (entry: T) => boolean) =>
    list.filter((e) => !ok(e)).map((e) => e.n);
  const framing = (input: PlanInput) => input.perMessageTokens ?? 0;

  it('exercises plans and 413s', () => {
    expect(planned.length).toBeGreaterThan(SESSIONS / 2);
    expect(overflowed.length).toBeGreaterThan(SESSIONS / 100);
  });

  it('fits the window exactly as counted: used = system + question + items + memory, used + max_tokens ≤ window − margin', () => {
    const bad = failing(planned, ({ input, plan }) => {
      const pm = framing(input);
      const items = new Map(input.items.map((i) => [i.id, i.tokens]));
      const itemTokens = plan.keptItemIds.reduce((s, id) => s + (items.get(id) ?? 0), 0);
      const used = input.systemPromptTokens + pm + (input.perRequestTokens ?? 0) + input.questionTokens + pm;
      return (
        plan.used === used + itemTokens + plan.memory.tokens && plan.used + plan.maxTokens <= plan.window - plan.margin
      );
    });
    expect(bad).toEqual([]);
  });

  it('partitions the pairs: compacted, dropped, summarised, verbatim, in session order, verbatim a suffix', () => {
    const bad = failing(planned, ({ input, plan }) => {
      const m = plan.memory;
      const order = [...m.compactedTurnIds, ...m.droppedTurnIds, ...m.summarisedTurnIds, ...m.verbatimTurnIds];
      const summarisedHaveOne = m.summarisedTurnIds.every(
        (id) => input.history.find((t) => t.id === id)?.summaryTokens !== undefined,
      );
      return JSON.stringify(order) === JSON.stringify(input.history.map((t) => t.id)) && summarisedHaveOne;
    });
    expect(bad).toEqual([]);
  });

  it('with memory off is the seed: items shrunk alone, then history trimmed into what they leave', () => {
    const bad = failing(
      planned.filter(({ input }) => input.memory?.mode === 'off'),
      ({ input, plan }) => {
        const never = input.relevance?.below === 'never' ? input.relevance.floor : -Infinity;
        const pm = framing(input);
        const fixed = input.systemPromptTokens + pm + (input.perRequestTokens ?? 0);
        const room = plan.available - Math.max(0, fixed - plan.reserve) - input.questionTokens - pm;
        const context = shrinkContext(
          input.items.filter((i) => i.score >= never),
          room,
        );
        const cap = input.maxHistoryMessages === undefined ? Infinity : Math.floor(input.maxHistoryMessages / 2);
        const trimmed = trimHistory(input.history, room - context.tokens, pm, cap);
        return (
          JSON.stringify(plan.keptItemIds) === JSON.stringify(context.kept.map((i) => i.id)) &&
          JSON.stringify(plan.keptTurnIds) === JSON.stringify(trimmed.kept.map((t) => t.id))
        );
      },
    );
    expect(bad).toEqual([]);
  });

  it('keeps the best item at or above the floor whenever there is one, and no item below the floor with `never`', () => {
    const bad = failing(
      planned.filter(({ input }) => input.memory?.mode !== 'off'),
      ({ input, plan }) => {
        const floor = input.relevance?.floor ?? -Infinity;
        const relevant = [...input.items].filter((i) => i.score >= floor).sort((a, b) => b.score - a.score);
        const scores = new Map(input.items.map((i) => [i.id, i.score]));
        const lowKept = plan.keptItemIds.some((id) => (scores.get(id) ?? 0) < floor);
        return (
          (relevant.length === 0 ||
            plan.keptItemIds[0] === relevant[0].id ||
            scores.get(plan.keptItemIds[0]) === relevant[0].score) &&
          !(input.relevance?.below === 'never' && lowKept)
        );
      },
    );
    expect(bad).toEqual([]);
  });

  it('answers 413 only when the question with its best relevant item (or alone) cannot fit', () => {
    const bad = failing(overflowed, ({ input }) => {
      const pm = framing(input);
      const budget =
        input.window -
        (input.maxTokens ?? 2048) -
        (input.reserve ?? 600) -
        Math.ceil((input.window * (input.exact ? 5 : 15)) / 100);
      const fixed = input.systemPromptTokens + pm + (input.perRequestTokens ?? 0);
      const room = budget - Math.max(0, fixed - (input.reserve ?? 600)) - input.questionTokens - pm;
      const floor = input.relevance?.floor ?? -Infinity;
      const candidates =
        input.memory?.mode === 'off'
          ? input.items.filter((i) => input.relevance?.below !== 'never' || i.score >= floor)
          : input.items.filter((i) => i.score >= floor);
      const best = [...candidates].sort((a, b) => b.score - a.score)[0];
      return room < (best?.tokens ?? 0);
    });
    expect(bad).toEqual([]);
  });
});
