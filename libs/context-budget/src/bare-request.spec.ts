import { resolveModel } from '@ask/model-catalog';
import { TiktokenCounter } from '@ask/token-counting';
import { sizeBareRequest } from './bare-request';

const counter = new TiktokenCounter('o200k_base');
const model = resolveModel({ provider: 'local', model: 'local' });

describe(sizeBareRequest.name, () => {
  it('sends the system prompt and the question alone, every pair and item dropped, with the budget of the window', () => {
    const question = 'What does the planner keep? '.repeat(400).trim();
    const sized = sizeBareRequest({
      model,
      counter,
      exact: false,
      maxTokens: 1024,
      systemPrompt: 'You answer.',
      question,
      history: [
        { message: { id: 'm1', question: 'q1', answer: 'a1' }, questionTokens: 2, answerTokens: 2 },
        { message: { id: 'm2', question: 'q2', answer: 'a2' }, questionTokens: 2, answerTokens: 2 },
      ],
      items: [{ id: 'k1', kind: 'knowledge', title: 'T', text: 'x', score: 0.5 }],
    });
    expect(sized.messages).toEqual([
      { role: 'system', content: 'You answer.' },
      { role: 'user', content: question },
    ]);
    expect(sized.plan.used).toBe(
      counter.countText('You answer.') +
        counter.countText(question) +
        2 * counter.perMessageTokens +
        counter.perRequestTokens,
    );
    expect(sized.plan).toMatchObject({
      window: model.window,
      maxTokens: 1024,
      margin: Math.ceil(model.window * 0.15),
      keptTurnIds: [],
      turnsDropped: 2,
      keptItemIds: [],
      droppedItemIds: ['k1'],
      contextKept: 0,
      contextDropped: 1,
    });
    expect(sized.plan.memory.droppedTurnIds).toEqual(['m1', 'm2']);
    expect(sized.figures).toEqual({ question: counter.countText(question), rag: 0, knowledge: 0 });
    expect(sized.keptItemTexts).toEqual([]);
    expect(sized.margin).toEqual({ percent: 15, basis: 'approximate' });
  });

  it("plans with the margin the counter asks for once the texts are counted (the project's calibrated one)", () => {
    const asked: Array<[number, number]> = [];
    const sized = sizeBareRequest({
      model,
      counter,
      exact: false,
      maxTokens: 1024,
      systemPrompt: 'You answer.',
      question: 'Which index is faster?',
      history: [],
      items: [],
      safetyMargin: (window, maxTokens) => {
        asked.push([window, maxTokens]);
        return { percent: 6.25, basis: 'calibrated', spread: 0.01, classes: ['latin'], estimateShare: 0 };
      },
    });
    expect(asked).toEqual([[model.window, 1024]]);
    expect(sized.margin).toEqual({
      percent: 6.25,
      basis: 'calibrated',
      spread: 0.01,
      classes: ['latin'],
      estimateShare: 0,
    });
    expect(sized.plan.margin).toBe(Math.ceil(model.window * 0.0625));
    expect(sized.plan.available).toBe(model.window - 1024 - 600 - Math.ceil(model.window * 0.0625));
  });
});
