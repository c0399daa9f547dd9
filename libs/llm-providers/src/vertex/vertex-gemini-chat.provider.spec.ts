import { createChatProvider, vertexWire } from '../create-chat-provider';
import { chatContract, collect } from '../testing/chat-contract';
import { startFakeUpstream } from '../testing/fake-upstream';
import type { LlmSettings } from '../types';
import { VertexClaudeChatProvider } from './vertex-claude-chat.provider';
import { VertexGeminiChatProvider } from './vertex-gemini-chat.provider';

const CREDENTIALS = { gcpAccessToken: 'ya29.fake-access-token-0000000000' };
const settings = (model: string): LlmSettings => ({
  provider: 'vertex',
  model,
  gcpProject: 'demo-project',
  region: 'us-central1',
});

describe(VertexGeminiChatProvider.name, () => {
  describe('Gemini streamGenerateContent', () => {
    chatContract({
      provider: 'vertex',
      model: 'gemini-2.5-flash',
      route: 'vertex.gemini.stream',
      window: 1000000,
      create: (fake) =>
        createChatProvider(settings('gemini-2.5-flash'), CREDENTIALS, { baseUrlOverrides: { vertex: fake.url } }),
    });
  });

  describe('wire', () => {
    it('puts the system prompt in systemInstruction, sends the bearer, and counts with :countTokens', async () => {
      const fake = await startFakeUpstream();
      try {
        const provider = createChatProvider(settings('gemini-2.5-flash'), CREDENTIALS, {
          baseUrlOverrides: { vertex: fake.url },
        });
        const request = {
          model: 'gemini-2.5-flash',
          messages: [
            { role: 'system' as const, content: 'Be brief.' },
            { role: 'user' as const, content: 'Hi' },
            { role: 'assistant' as const, content: 'Hello.' },
            { role: 'user' as const, content: 'And then?' },
          ],
          maxTokens: 50,
        };
        const counted = await provider.countRequestTokens?.(request);
        const { usage } = await collect(provider.streamChat(request));
        expect(counted).toBe(usage?.promptTokens);
        expect(fake.requests[1]).toMatchObject({
          path: '/v1/projects/demo-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent',
          query: { alt: 'sse' },
          auth: 'bearer',
          body: {
            systemInstruction: { parts: [{ text: 'Be brief.' }] },
            contents: [
              { role: 'user', parts: [{ text: 'Hi' }] },
              { role: 'model', parts: [{ text: 'Hello.' }] },
              { role: 'user', parts: [{ text: 'And then?' }] },
            ],
            generationConfig: { maxOutputTokens: 50 },
          },
        });
      } finally {
        await fake.close();
      }
    });

    it('routes each Vertex model to its wire', () => {
      expect(
        [
          'gemini-2.5-pro',
          'claude-sonnet-4-5@20250929',
          'meta/llama-3.3-70b-instruct-maas',
          'qwen/qwen3-235b-a22b-instruct-2507-maas',
        ].map(vertexWire),
      ).toEqual(['gemini', 'claude', 'maas', 'maas']);
    });
  });
});

describe(VertexClaudeChatProvider.name, () => {
  chatContract({
    provider: 'vertex',
    model: 'claude-sonnet-4-5@20250929',
    route: 'vertex.claude.stream',
    window: 200000,
    disconnectAfter: 4,
    create: (fake) =>
      createChatProvider(settings('claude-sonnet-4-5@20250929'), CREDENTIALS, {
        baseUrlOverrides: { vertex: fake.url },
      }),
  });

  it('sends anthropic_version vertex-2023-10-16 and no model in the body', async () => {
    const fake = await startFakeUpstream();
    try {
      const provider = createChatProvider(settings('claude-sonnet-4-5@20250929'), CREDENTIALS, {
        baseUrlOverrides: { vertex: fake.url },
      });
      await collect(
        provider.streamChat({
          model: 'claude-sonnet-4-5@20250929',
          messages: [
            { role: 'system', content: 'S' },
            { role: 'user', content: 'Q' },
          ],
          maxTokens: 9,
        }),
      );
      expect(fake.requests[0]?.body).toEqual({
        anthropic_version: 'vertex-2023-10-16',
        max_tokens: 9,
        system: 'S',
        messages: [{ role: 'user', content: 'Q' }],
        stream: true,
      });
      expect(provider.countRequestTokens).toBeUndefined();
    } finally {
      await fake.close();
    }
  });
});

describe('Vertex MaaS (OpenAI-compatible endpoint)', () => {
  chatContract({
    provider: 'vertex',
    model: 'meta/llama-3.3-70b-instruct-maas',
    route: 'vertex.maas.chat',
    window: 32000,
    countsCompletion: true,
    create: (fake) =>
      createChatProvider(settings('meta/llama-3.3-70b-instruct-maas'), CREDENTIALS, {
        baseUrlOverrides: { vertex: fake.url },
      }),
  });
});
