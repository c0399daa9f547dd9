import { createChatProvider } from '../create-chat-provider';
import { chatContract, collect } from '../testing/chat-contract';
import { allowing } from '../testing/egress';
import { startFakeUpstream } from '../testing/fake-upstream';
import { AnthropicChatProvider } from './anthropic-chat.provider';

const KEY = 'sk-ant-test-0000000000000000';
const messages = [
  { role: 'system' as const, content: 'Answer from the context only.' },
  { role: 'user' as const, content: 'What is in the context?' },
];

describe(AnthropicChatProvider.name, () => {
  describe('Anthropic Messages (direct)', () => {
    chatContract({
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
      route: 'anthropic.messages',
      window: 200000,
      disconnectAfter: 4,
      create: (fake) =>
        createChatProvider(
          { provider: 'anthropic', model: 'claude-sonnet-4-6' },
          { apiKey: KEY },
          { baseUrlOverrides: { anthropic: fake.url } },
        ),
    });
  });

  describe('Claude through Azure AI Foundry', () => {
    chatContract({
      provider: 'azure-foundry',
      model: 'claude-sonnet-4-6',
      route: 'foundry.anthropic.messages',
      window: 200000,
      disconnectAfter: 4,
      create: (fake) =>
        createChatProvider(
          { provider: 'azure-foundry', model: 'claude-sonnet-4-6', baseUrl: fake.url },
          { apiKey: KEY },
          allowing(fake),
        ),
    });
  });

  describe('wire', () => {
    it('puts the system prompt in `system`, sends the key in x-api-key, and counts with count_tokens', async () => {
      const fake = await startFakeUpstream();
      try {
        const provider = createChatProvider(
          { provider: 'anthropic', model: 'claude-sonnet-4-6' },
          { apiKey: KEY },
          { baseUrlOverrides: { anthropic: fake.url } },
        );
        const request = { model: 'claude-sonnet-4-6', messages, maxTokens: 100 };
        const counted = await provider.countRequestTokens?.(request);
        const { usage } = await collect(provider.streamChat(request));
        expect(counted).toBe(usage?.promptTokens);
        expect(fake.requests.map((r) => r.route)).toEqual(['anthropic.count_tokens', 'anthropic.messages']);
        expect(fake.requests[1]).toMatchObject({
          auth: 'x-api-key',
          body: {
            model: 'claude-sonnet-4-6',
            max_tokens: 100,
            system: 'Answer from the context only.',
            messages: [{ role: 'user', content: 'What is in the context?' }],
            stream: true,
          },
        });
        expect(fake.requests[1]?.headers['authorization']).toBeUndefined();
        expect(fake.requests[1]?.headers['anthropic-version']).toBeDefined();
      } finally {
        await fake.close();
      }
    });

    it('classifies the input-plus-max_tokens form with the window as limit', async () => {
      const fake = await startFakeUpstream();
      try {
        const provider = createChatProvider(
          { provider: 'anthropic', model: 'claude-sonnet-4-6' },
          { apiKey: KEY },
          { baseUrlOverrides: { anthropic: fake.url } },
        );
        const { classifyUpstreamError } = await import('../errors/classify-upstream-error');
        const request = {
          model: 'claude-sonnet-4-6',
          messages: [{ role: 'user' as const, content: 'hello '.repeat(199000) }],
          maxTokens: 8192,
        };
        const err = await collect(provider.streamChat(request)).catch((e: unknown) => e);
        const prompt = fake.requests[0]?.promptTokens ?? NaN;
        expect(prompt).toBeLessThan(200000);
        expect(classifyUpstreamError(err, 'anthropic')).toMatchObject({
          kind: 'overflow',
          limit: 200000,
          actual: prompt + 8192,
        });
      } finally {
        await fake.close();
      }
    }, 30000);

    it('has no count_tokens on Foundry', () => {
      const provider = createChatProvider(
        { provider: 'azure-foundry', model: 'claude-sonnet-4-6', baseUrl: 'http://127.0.0.1:9' },
        { apiKey: KEY },
        allowing('http://127.0.0.1:9'),
      );
      expect(provider.countRequestTokens).toBeUndefined();
    });
  });
});
