import { renderContextItem } from '@ask/context-budget';
import type { ChatMessage, TokenCounter } from '@ask/token-counting';
import { composeAnswer, LocalChatProvider, parseUserMessage } from './local-chat.provider';

/** Counts one token per whitespace-separated word and 1 per message: enough to check the usage wiring. */
const wordCounter: TokenCounter = {
  id: 'test:words',
  exact: true,
  perMessageTokens: 1,
  perRequestTokens: 0,
  countText: (t) => t.split(/\s+/).filter(Boolean).length,
  countMessages(ms) {
    return ms.reduce((n, m) => n + this.countText(m.content) + this.perMessageTokens, 0);
  },
};

const userMessage =
  renderContextItem({ kind: 'knowledge', title: 'HNSW indexes', score: 0.81, text: 'An HNSW index creates a multilayer graph. It has better query performance than IVFFlat but slower build times.' }, 0) +
  renderContextItem({ kind: 'knowledge', title: 'IVFFlat', score: 0.42, text: 'An IVFFlat index divides vectors into lists, and then searches a subset of those lists.\n\nLists are built with k-means.' }, 1) +
  'Which index has better query performance?';

describe(LocalChatProvider.name, () => {
  describe('parseUserMessage', () => {
    it('finds each [n] passage with its title and the question', () => {
      const { passages, question } = parseUserMessage(userMessage);
      expect(passages.map((p) => [p.index, p.title])).toEqual([
        [1, 'HNSW indexes'],
        [2, 'IVFFlat'],
      ]);
      expect(question).toBe('Which index has better query performance?');
    });
  });

  describe('composeAnswer', () => {
    it('quotes the best-matching sentence with its source', () => {
      const answer = composeAnswer([{ role: 'user', content: userMessage }], 1);
      expect(answer).toBe(
        [
          'From the retrieved context:',
          '- It has better query performance than IVFFlat but slower build times. [1: HNSW indexes]',
          'Sources: [1] HNSW indexes',
        ].join('\n'),
      );
    });

    it('drops the passage\'s own list markers from a quoted sentence', () => {
      const content =
        renderContextItem({ kind: 'knowledge', title: 'CHANGELOG', score: 0.5, text: '- Added support for parallel index builds for HNSW indexes' }, 0) +
        'Which index builds run in parallel?';
      expect(composeAnswer([{ role: 'user', content }], 1).split('\n')[1]).toBe(
        '- Added support for parallel index builds for HNSW indexes [1: CHANGELOG]',
      );
    });

    it('says how many earlier turns the prompt carried', () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'Answer from context.' },
        { role: 'user', content: 'What is pgvector?' },
        { role: 'assistant', content: 'An extension.' },
        { role: 'user', content: userMessage },
      ];
      expect(composeAnswer(messages, 1).split('\n')[0]).toBe('(Follow-up; this prompt carried 1 earlier turn.)');
    });
  });

  describe('streamChat', () => {
    it('streams the answer in several deltas, then usage from the counter', async () => {
      const provider = new LocalChatProvider({ counter: wordCounter, wordsPerChunk: 3 });
      const messages: ChatMessage[] = [{ role: 'user', content: userMessage }];
      const deltas: string[] = [];
      let usage: unknown;
      for await (const chunk of provider.streamChat({ model: 'local', messages, maxTokens: 256 })) {
        if (chunk.type === 'delta') deltas.push(chunk.text);
        else usage = chunk;
      }
      const answer = composeAnswer(messages, 3);
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(answer);
      expect(usage).toEqual({
        type: 'usage',
        promptTokens: wordCounter.countMessages(messages),
        completionTokens: wordCounter.countText(answer),
      });
    });

    it('stops with an AbortError when the signal aborts', async () => {
      const provider = new LocalChatProvider({ counter: wordCounter, chunkDelayMs: 20 });
      const controller = new AbortController();
      const stream = provider.streamChat({ model: 'local', messages: [{ role: 'user', content: userMessage }], maxTokens: 64, signal: controller.signal });
      const it = stream[Symbol.asyncIterator]();
      await it.next();
      controller.abort();
      await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
    });
  });
});
