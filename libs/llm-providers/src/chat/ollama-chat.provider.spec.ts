import { startFakeUpstream } from '../testing/fake-upstream';
import { createChatProvider } from '../create-chat-provider';
import { detectSilentTruncation } from '../silent-truncation';
import { chatContract, collect } from '../testing/chat-contract';
import { OllamaChatProvider } from './ollama-chat.provider';

describe(OllamaChatProvider.name, () => {
  describe('contract against the fake upstream (num_ctx 4096)', () => {
    chatContract({
      provider: 'ollama',
      model: 'llama3.1:8b',
      route: 'ollama.chat',
      window: 4096,
      create: (fake) =>
        createChatProvider(
          { provider: 'ollama', model: 'llama3.1:8b', numCtx: 4096 },
          {},
          { baseUrlOverrides: { ollama: fake.url } },
        ),
    });
  });

  describe('buildBody', () => {
    it('always disables truncation and context shift, and sends num_ctx only when set', () => {
      const request = { model: 'qwen3:8b', messages: [{ role: 'user' as const, content: 'hi' }], maxTokens: 128 };
      const withoutCtx = new OllamaChatProvider({ baseUrl: 'http://127.0.0.1:1' }).buildBody(request);
      expect(withoutCtx).toEqual({
        model: 'qwen3:8b',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        truncate: false,
        shift: false,
        options: { num_predict: 128 },
      });
      const withCtx = new OllamaChatProvider({ baseUrl: 'http://127.0.0.1:1', numCtx: 8192 }).buildBody(request);
      expect(withCtx['options']).toEqual({ num_predict: 128, num_ctx: 8192 });
    });
  });

  describe('silent truncation', () => {
    it('reports a prompt_eval_count far below what was sent, which detectSilentTruncation flags', async () => {
      const fake = await startFakeUpstream();
      try {
        fake.setFault('silent-truncation');
        const provider = createChatProvider(
          { provider: 'ollama', model: 'llama3.1:8b' },
          {},
          { baseUrlOverrides: { ollama: fake.url } },
        );
        const { usage } = await collect(
          provider.streamChat({
            model: 'llama3.1:8b',
            messages: [{ role: 'user', content: 'context '.repeat(400) }],
            maxTokens: 64,
          }),
        );
        const sent = fake.requests[0]?.promptTokens ?? 0;
        expect(usage?.promptTokens).toBe(Math.floor(sent / 4));
        expect(detectSilentTruncation(sent, usage?.promptTokens ?? null)).toBe(true);
        expect(fake.requests[0]?.body).toMatchObject({ truncate: false, shift: false });
        expect((fake.requests[0]?.body as { options: object }).options).not.toHaveProperty('num_ctx');
      } finally {
        await fake.close();
      }
    });
  });
});
