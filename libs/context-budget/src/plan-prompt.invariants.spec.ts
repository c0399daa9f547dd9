import { AskErrorCode, isAskError } from '@ask/ask-errors';
import { seededRandom } from '@ask/testing';
import type { ChatMessage, TokenCounter } from '@ask/token-counting';
import { assembleMessages } from './assemble';
import { planPrompt, type PlanInput, type PromptPlan } from './plan-prompt';
import type { ContextItemCost, HistoryTurn } from './trim';

/** A counter where one character is one token, with configurable framing: counts are exact by construction. */
function charCounter(perMessageTokens: number, perRequestTokens: number): TokenCounter {
  const countText = (text: string): number => text.length;
  return {
    id: 'test:chars',
    exact: true,
    perMessageTokens,
    perRequestTokens,
    countText,
    countMessages: (messages: readonly ChatMessage[]) =>
      messages.reduce((sum, m) => sum + countText(m.content) + perMessageTokens, perRequestTokens),
  };
}

const WINDOWS = [4096, 8192, 16384, 32000, 32768, 65536, 128000, 200000];
const KINDS: ContextItemCost['kind'][] = ['insight', 'recommendation', 'knowledge'];

/** One random session: sizes span "everything fits" to "nothing fits". */
function randomInput(random: () => number): PlanInput {
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const window = WINDOWS[int(0, WINDOWS.length - 1)];
  const scale = window / 8192;
  const history: HistoryTurn[] = Array.from({ length: int(0, 40) }, (_, i) => ({
    id: `t${i}`,
    questionTokens: int(1, Math.ceil(300 * scale)),
    answerTokens: int(1, Math.ceil(random() < 0.1 ? 8000 * scale : 900 * scale)),
  }));
  const items: ContextItemCost[] = Array.from({ length: int(0, 10) }, (_, i) => ({
    id: `c${i}`,
    kind: KINDS[int(0, 2)],
    score: Math.round(random() * 100) / 100,
    tokens: int(1, Math.ceil(random() < 0.1 ? 6000 * scale : 600 * scale)),
  }));
  return {
    model: `m-${window}`,
    window,
    maxTokens: int(1, Math.min(4096, window / 2)),
    reserve: random() < 0.5 ? undefined : int(0, 1000),
    exact: random() < 0.5,
    systemPromptTokens: int(0, random() < 0.1 ? 3000 : 700),
    questionTokens: int(1, Math.ceil(random() < 0.1 ? 9000 * scale : 500 * scale)),
    history,
    items,
    perMessageTokens: int(0, 6),
    perRequestTokens: int(0, 4),
    maxHistoryMessages: random() < 0.3 ? int(0, 30) : undefined,
  };
}

const SESSIONS = 3000;
const random = seededRandom(20240917);
const cases = Array.from({ length: SESSIONS }, () => randomInput(random));

/** The request as it would go upstream, texts made of as many characters as their token counts. */
function assemble(input: PlanInput, keptTurnIds: string[], keptItemIds: string[]): ChatMessage[] {
  const turns = new Map(input.history.map((t) => [t.id, t]));
  const items = new Map(input.items.map((i) => [i.id, i]));
  return assembleMessages({
    systemPrompt: 's'.repeat(input.systemPromptTokens),
    contextItems: keptItemIds.map((id) => 'c'.repeat(items.get(id)?.tokens ?? 0)),
    history: keptTurnIds.map((id) => ({
      question: 'q'.repeat(turns.get(id)?.questionTokens ?? 0),
      answer: 'a'.repeat(turns.get(id)?.answerTokens ?? 0),
    })),
    question: 'Q'.repeat(input.questionTokens),
  });
}

describe(`${planPrompt.name} invariants over ${SESSIONS} seeded random sessions`, () => {
  // Planned and assembled once, while the suite is collected; each test then checks every session and
  // reports the failing session numbers (one expect per test keeps the run fast on a busy machine).
  const planned: Array<{ n: number; input: PlanInput; plan: PromptPlan; messages: ChatMessage[] }> = [];
  const overflowed: Array<{ n: number; input: PlanInput; error: unknown }> = [];
  cases.forEach((input, n) => {
    try {
      const plan = planPrompt(input);
      planned.push({ n, input, plan, messages: assemble(input, plan.keptTurnIds, plan.keptItemIds) });
    } catch (error) {
      overflowed.push({ n, input, error });
    }
  });
  const failing = <T extends { n: number }>(list: T[], ok: (entry: T) => boolean): number[] =>
    list.filter((entry) => !ok(entry)).map((entry) => entry.n);

  it('exercises both outcomes: plans and 413s', () => {
    expect(planned.length).toBeGreaterThan(SESSIONS / 4);
    expect(overflowed.length).toBeGreaterThan(SESSIONS / 50);
  });

  it('never sends a request whose input plus max_tokens exceeds the window', () => {
    const bad = failing(planned, ({ input, plan, messages }) => {
      const counted = charCounter(input.perMessageTokens ?? 0, input.perRequestTokens ?? 0).countMessages(messages);
      return counted === plan.used && plan.used + plan.maxTokens <= plan.window - plan.margin;
    });
    expect(bad).toEqual([]);
  });

  it('never sends an answer without its question, and keeps whole pairs as a suffix of the session', () => {
    const bad = failing(planned, ({ input, plan, messages }) => {
      const ids = input.history.map((t) => t.id);
      const suffix = ids.slice(ids.length - plan.turnsKept);
      const roles = messages.map((m) => m.role);
      return (
        JSON.stringify(plan.keptTurnIds) === JSON.stringify(suffix) &&
        roles.every((role, i) => role !== 'assistant' || roles[i - 1] === 'user') &&
        roles[roles.length - 1] === 'user'
      );
    });
    expect(bad).toEqual([]);
  });

  it('never drops the system prompt and never forms an empty message list', () => {
    const bad = failing(
      planned,
      ({ input, messages }) =>
        messages.length >= 2 &&
        messages[0].role === 'system' &&
        messages[0].content.length === input.systemPromptTokens,
    );
    expect(bad).toEqual([]);
  });

  it('packs tight: the next older pair would not have fitted, unless the message cap stopped it', () => {
    const bad = failing(planned, ({ input, plan }) => {
      const next = input.history[input.history.length - plan.turnsKept - 1];
      const capped =
        input.maxHistoryMessages !== undefined && plan.turnsKept >= Math.floor(input.maxHistoryMessages / 2);
      if (next === undefined || capped) return true;
      const framing = 2 * (input.perMessageTokens ?? 0);
      const keptTokens = input.history
        .slice(input.history.length - plan.turnsKept)
        .reduce((sum, t) => sum + t.questionTokens + t.answerTokens + framing, 0);
      return keptTokens + next.questionTokens + next.answerTokens + framing > plan.historyBudget;
    });
    expect(bad).toEqual([]);
  });

  it('drops items lowest score first and only as many as needed', () => {
    const bad = failing(planned, ({ input, plan }) => {
      const byId = new Map(input.items.map((i) => [i.id, i]));
      const keptScores = plan.keptItemIds.map((id) => byId.get(id)?.score ?? 0);
      const droppedScores = plan.droppedItemIds.map((id) => byId.get(id)?.score ?? 0);
      if (plan.contextKept + plan.contextDropped !== input.items.length) return false;
      if (droppedScores.length === 0) return true;
      // Putting back the best dropped item would not have fitted even with no history.
      const bestDropped = byId.get(plan.droppedItemIds[0])?.tokens ?? 0;
      return Math.min(...keptScores) >= Math.max(...droppedScores) && plan.historyBudget - bestDropped < 0;
    });
    expect(bad).toEqual([]);
  });

  it('answers 413 context_overflow only when the question with its best item (or alone) cannot fit', () => {
    const bad = failing(overflowed, ({ input, error }) => {
      if (!isAskError(error) || error.code !== AskErrorCode.ContextOverflow || error.status !== 413) return false;
      const best = [...input.items].sort((a, b) => b.score - a.score)[0];
      const bestTokens = best?.tokens ?? 0;
      const rag = best && best.kind !== 'knowledge' ? bestTokens : 0;
      const details = `model=${input.model} window=${input.window} question=${input.questionTokens} rag=${rag} knowledge=${bestTokens - rag}`;
      // Recomputed from the seed's formula: the question and the best item (or nothing) exceed the room.
      const { window, exact } = input;
      const reserve = input.reserve ?? 600;
      const margin = Math.ceil((window * (exact ? 5 : 15)) / 100);
      const perMessage = input.perMessageTokens ?? 0;
      const fixed = input.systemPromptTokens + perMessage + (input.perRequestTokens ?? 0);
      const available = window - (input.maxTokens ?? 2048) - reserve - margin;
      const room = available - Math.max(0, fixed - reserve) - input.questionTokens - perMessage;
      return error.details === details && bestTokens > room;
    });
    expect(bad).toEqual([]);
  });
});
