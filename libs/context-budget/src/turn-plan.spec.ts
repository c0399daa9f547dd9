import { AskError, AskErrorCode } from '@ask/ask-errors';
import { resolveModel } from '@ask/model-catalog';
import { TiktokenCounter } from '@ask/token-counting';
import {
  assertFits,
  planBareTurn,
  planTurn,
  questionOverflowOf,
  replanFigures,
  rescaleAfterCount,
  sendsBareRequest,
  type TurnPlanInput,
} from './turn-plan';

const counter = new TiktokenCounter('o200k_base');
const model = resolveModel(
  { provider: 'openai', model: 'gpt-4o', baseUrl: 'http://127.0.0.1:1/v1' },
  { contextWindow: 8192 },
);
const input = (question: string, exact = true): TurnPlanInput => ({
  model,
  counter,
  exact,
  maxTokens: 1024,
  systemPrompt: 'You answer.',
  question,
  history: [{ message: { id: 'm1', question: 'q1', answer: 'a1' }, questionTokens: 2, answerTokens: 2 }],
  items: [{ id: 'k1', kind: 'knowledge', title: 'T', text: 'An HNSW index builds a graph.', score: 0.8 }],
});

describe(planTurn.name, () => {
  it('plans against the model window at scale 1, and against a lower window with a scale on a re-plan', () => {
    const first = planTurn(input('What does HNSW build?'));
    expect([first.window, first.scale, first.plan.turnsKept, first.plan.contextKept]).toEqual([8192, 1, 1, 1]);
    const again = planTurn(input('What does HNSW build?'), { window: 4096, scale: 2 });
    expect([again.window, again.scale]).toEqual([4096, 2]);
    // Every count doubled (each rounded up): the question's figure is twice the first plan's.
    expect(again.figures.question).toBe(2 * first.figures.question);
  });
});

describe(sendsBareRequest.name, () => {
  const overflow = new AskError(AskErrorCode.ContextOverflow, { details: 'x' });
  it.each([
    ['an approximate plan refused with context_overflow', overflow, false, true],
    ['an exact plan refused with context_overflow', overflow, true, false],
    ['an approximate plan failing with another error', new RangeError('blank question'), false, false],
  ])('%s', (_label, err, exact, expected) => {
    expect(sendsBareRequest(err, exact)).toBe(expected);
  });
});

describe(planBareTurn.name, () => {
  it('sends the system prompt and the question alone, with the approximate margin (15%)', () => {
    const sized = planBareTurn(input('What does HNSW build?'));
    expect(sized.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect([sized.plan.turnsDropped, sized.plan.margin]).toEqual([1, Math.ceil(8192 * 0.15)]);
  });
});

describe(assertFits.name, () => {
  it('passes while one token is left for the question, and throws the 413 with the figures otherwise', () => {
    // 8192 − 1024 − 600 − ceil(8192 × 5%) = 6158 tokens left.
    expect(() => assertFits('m', 8192, 1024, true)).not.toThrow();
    expect(() => assertFits('m', 8192, 8192, true)).toThrow(
      expect.objectContaining({
        code: AskErrorCode.ContextOverflow,
        details: 'model=m window=8192 maxTokens=8192 reserve=600 margin=410 available=-1010',
      }),
    );
  });
});

describe(rescaleAfterCount.name, () => {
  const sized = { window: 8192, scale: 1, plan: { used: 5000, margin: 410 } as never };
  it('keeps the plan when the provider count plus max_tokens fits the window less the margin', () => {
    expect(rescaleAfterCount(sized, 6758, 1024)).toBeUndefined();
  });
  it('re-plans the same window at the observed ratio when it does not', () => {
    expect(rescaleAfterCount(sized, 6759, 1024)).toEqual({ window: 8192, scale: 1.3518 });
  });
});

describe(questionOverflowOf.name, () => {
  const sized = { window: 8192, plan: { used: 4000 } as never, figures: { question: 3000, rag: 0, knowledge: 0 } };
  it('names the question in the provider’s tokens when it disclosed the prompt (its share of our count)', () => {
    expect(questionOverflowOf('m', sized, 1024, { promptTokens: 10_000 }).details).toBe(
      'model=m window=8192 maxTokens=1024 question=7500 prompt=10000',
    );
  });
  it('names our count when it disclosed none', () => {
    expect(questionOverflowOf('m', sized, 1024, {}).details).toBe('model=m window=8192 maxTokens=1024 question=3000');
  });
});

describe(replanFigures.name, () => {
  const sized = (window: number, used: number, scale = 1) => ({ window, scale, plan: { used } as never });
  it.each([
    [
      'disclosed prompt above the plan: scale by the ratio, same window',
      sized(8192, 5000),
      { limit: 8192, promptTokens: 8732 },
      { window: 8192, scale: 1.7464 },
    ],
    [
      'the ratio multiplies the scale already applied',
      sized(8192, 5000, 1.5),
      { limit: 8192, promptTokens: 6000 },
      { window: 8192, scale: 1.8 },
    ],
    [
      'a smaller window disclosed, prompt below the plan: the window',
      sized(64_000, 50_000),
      { limit: 16_000, promptTokens: 40_000 },
      { window: 16_000, scale: 1 },
    ],
    [
      'a smaller window and a denser count: both',
      sized(64_000, 20_000),
      { limit: 16_000, promptTokens: 30_000 },
      { window: 16_000, scale: 1.5 },
    ],
    ['nothing disclosed: 10% below the window, never window − 1', sized(8192, 5000), {}, { window: 7372, scale: 1 }],
    [
      'a limit not below the window and no count: 10% below',
      sized(8192, 5000),
      { limit: 8192 },
      { window: 7372, scale: 1 },
    ],
  ] as const)('%s', (_label, s, overflow, expected) => {
    const got = replanFigures(s, overflow);
    expect({ window: got.window, scale: Number(got.scale.toFixed(4)) }).toEqual(expected);
  });
});
