import { AskErrorCode } from '@ask/ask-errors';
import type { TurnPlanInput } from '@ask/context-budget';
import { resolveModel } from '@ask/model-catalog';
import type { HistoryPair } from '@ask/persistence';
import { TiktokenCounter } from '@ask/token-counting';
import { firstPlan, planAttributes, replanAfterOverflow } from './plan';
import type { Turn } from './turn';

const counter = new TiktokenCounter('o200k_base');
const model = resolveModel(
  { provider: 'openai', model: 'gpt-4o', baseUrl: 'http://127.0.0.1:1/v1' },
  { contextWindow: 8192 },
);
const pair = (id: string, text: string) => ({ id, askId: id, question: text, answer: text }) as unknown as HistoryPair;
const input = (question: string, exact: boolean): TurnPlanInput<HistoryPair> => ({
  model,
  counter,
  exact,
  maxTokens: 1024,
  systemPrompt: 'You answer.',
  question,
  history: [{ message: pair('m1', 'An earlier question.'), questionTokens: 4, answerTokens: 4 }],
  items: [{ id: 'k1', kind: 'knowledge', title: 'T', text: 'An HNSW index builds a graph.', score: 0.8 }],
});
// 8192 − 1024 − 600 − 15% margin leaves 5340 tokens; this question alone is about 8,000.
const huge = 'word '.repeat(8000).trim();

describe(firstPlan.name, () => {
  it('plans the turn with the pair and the item when they fit', () => {
    const { sized, bare } = firstPlan(input('What does HNSW build?', true));
    expect(bare).toBe(false);
    expect([sized.plan.turnsKept, sized.plan.contextKept, sized.messages.length]).toEqual([1, 1, 4]);
  });

  it('sends the bare request when the approximate plan has no room for the question', () => {
    const { sized, bare } = firstPlan(input(huge, false));
    expect(bare).toBe(true);
    expect(sized.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect([sized.plan.turnsDropped, sized.plan.contextKept]).toEqual([1, 0]);
  });

  it('refuses with the 413 when the exact plan has no room for the question', () => {
    expect(() => firstPlan(input(huge, true))).toThrow(expect.objectContaining({ code: AskErrorCode.ContextOverflow }));
  });
});

describe(replanAfterOverflow.name, () => {
  const turn = (exact: boolean) =>
    ({
      model,
      maxTokens: 1024,
      choice: { exactPlan: exact },
      planInput: input('What does HNSW build?', exact),
      // An exact counter: no calibrated estimate, so no lowest margin carried (the seed's).
      lowestMargin: undefined,
    }) as Pick<Turn, 'model' | 'maxTokens' | 'choice' | 'planInput' | 'lowestMargin'>;
  it('plans once more at the disclosed window and the observed ratio', () => {
    const { sized } = firstPlan(input('What does HNSW build?', true));
    const again = replanAfterOverflow(turn(true), sized, {
      kind: 'overflow',
      limit: 4096,
      promptTokens: sized.plan.used * 2,
    } as never);
    expect([again.window, again.scale]).toEqual([4096, 2]);
  });

  it('ends with the 413 of the settings when the disclosed window leaves no room for a question', () => {
    const { sized } = firstPlan(input('What does HNSW build?', true));
    expect(() => replanAfterOverflow(turn(true), sized, { kind: 'overflow', limit: 1500 } as never)).toThrow(
      expect.objectContaining({
        code: AskErrorCode.ContextOverflow,
        details: 'model=gpt-4o window=1500 maxTokens=1024 reserve=600 margin=75 available=-199',
      }),
    );
  });
});

describe(planAttributes.name, () => {
  it('gives the plan’s figures in tokens, no text', () => {
    const { sized } = firstPlan(input('What does HNSW build?', true));
    expect(planAttributes(sized)).toEqual({
      'ask.budget.window': 8192,
      'ask.budget.used': sized.plan.used,
      'ask.budget.available': 8192 - 1024 - 600 - 410,
      'ask.budget.turns_kept': 1,
      'ask.budget.turns_dropped': 0,
      'ask.budget.context_kept': 1,
      'ask.budget.context_dropped': 0,
    });
  });
});
