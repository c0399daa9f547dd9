import { windowOf } from '../testing/fake-upstream';
import { createChatProvider } from '../create-chat-provider';
import { chatContract, collect } from '../testing/chat-contract';
import { allowing } from '../testing/egress';
import { OpenAiChatProvider } from './openai-chat.provider';

const KEY = 'sk-test-openai-0000000000000000';

describe(OpenAiChatProvider.name, () => {
  describe('api.openai.com (canonical endpoint, pointed at the fake)', () => {
    chatContract({
      provider: 'openai',
      model: 'gpt-4o',
      route: 'openai.chat',
      window: 128000,
      create: (fake) =>
        createChatProvider(
          { provider: 'openai', model: 'gpt-4o' },
          { apiKey: KEY },
          { baseUrlOverrides: { openai: `${fake.url}/v1` } },
        ),
    });
  });

  describe('custom base_url (vLLM)', () => {
    chatContract({
      provider: 'openai',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      route: 'openai.chat',
      window: 32000,
      countsCompletion: true,
      create: (fake) =>
        createChatProvider(
          { provider: 'openai', model: 'meta-llama/Llama-3.1-8B-Instruct', baseUrl: `${fake.url}/v1` },
          {},
          allowing(fake),
        ),
    });
  });

  describe('request', () => {
    it('asks for usage in the stream and sends max_completion_tokens on the canonical endpoint', async () => {
      const { startFakeUpstream } = await import('../testing/fake-upstream');
      const fake = await startFakeUpstream();
      try {
        const provider = createChatProvider(
          { provider: 'openai', model: 'gpt-4o' },
          { apiKey: KEY },
          { baseUrlOverrides: { openai: `${fake.url}/v1` } },
        );
        await collect(
          provider.streamChat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], maxTokens: 64 }),
        );
        expect(fake.requests[0]).toMatchObject({
          route: 'openai.chat',
          auth: 'bearer',
          body: { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, max_completion_tokens: 64 },
        });
        expect(JSON.stringify(fake.requests)).not.toContain(KEY);
      } finally {
        await fake.close();
      }
    });

    it('knows the windows it is tested against', () => {
      expect(windowOf('openai', 'gpt-4o')).toBe(128000);
      expect(windowOf('openai', 'meta-llama/Llama-3.1-8B-Instruct')).toBe(32000);
    });
  });
});
