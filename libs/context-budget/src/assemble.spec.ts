import { assembleMessages, renderContextItem } from './assemble';
import { MEMORY_ACK } from './plan-memory';

describe(renderContextItem.name, () => {
  it.each([
    [
      { kind: 'insight' as const, title: 'Churn rises in Q3', score: 0.8712, text: 'Churn went up 4%.' },
      0,
      '[1] insight · Churn rises in Q3 · score 0.87\nChurn went up 4%.\n\n',
    ],
    [
      { kind: 'knowledge' as const, title: ' Onboarding\n guide ', score: 0.5, text: '\n  Step one.  \n' },
      2,
      '[3] knowledge · Onboarding guide · score 0.50\nStep one.\n\n',
    ],
  ])('renders %j at index %i', (item, index, expected) => {
    expect(renderContextItem(item, index)).toBe(expected);
  });
});

describe(assembleMessages.name, () => {
  it('puts the system prompt first, pairs in order, then the context and the question last', () => {
    const messages = assembleMessages({
      systemPrompt: 'You answer from the context.',
      contextItems: ['[1] insight · A · score 0.90\na\n\n', '[2] knowledge · B · score 0.40\nb\n\n'],
      history: [
        { question: 'q1', answer: 'a1' },
        { question: 'q2', answer: 'a2' },
      ],
      question: 'What changed?',
    });
    expect(messages).toEqual([
      { role: 'system', content: 'You answer from the context.' },
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'a2' },
      {
        role: 'user',
        content: '[1] insight · A · score 0.90\na\n\n[2] knowledge · B · score 0.40\nb\n\nWhat changed?',
      },
    ]);
  });

  it('sends memory as a user-role block and the assistant acknowledgement after the system prompt, never as system', () => {
    const messages = assembleMessages({
      systemPrompt: 'You answer from the context.',
      contextItems: [],
      history: [{ question: 'q2', answer: 'a2' }],
      question: 'What changed?',
      memory: 'the memory block',
    });
    expect(messages).toEqual([
      { role: 'system', content: 'You answer from the context.' },
      { role: 'user', content: 'the memory block' },
      { role: 'assistant', content: MEMORY_ACK },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'a2' },
      { role: 'user', content: 'What changed?' },
    ]);
  });

  it('never returns an empty list: no history and no context still gives the system prompt and the question', () => {
    expect(assembleMessages({ systemPrompt: '', contextItems: [], history: [], question: 'Hi?' })).toEqual([
      { role: 'system', content: '' },
      { role: 'user', content: 'Hi?' },
    ]);
  });

  it('throws a RangeError for a blank question', () => {
    expect(() => assembleMessages({ systemPrompt: 's', contextItems: [], history: [], question: ' \n' })).toThrow(
      RangeError,
    );
  });
});
