import { AskErrorCode } from '@ask/ask-errors';
import { AnthropicChatProvider } from './chat/anthropic-chat.provider';
import { BedrockChatProvider } from './chat/bedrock-chat.provider';
import { OllamaChatProvider } from './chat/ollama-chat.provider';
import { OpenAiChatProvider } from './chat/openai-chat.provider';
import { createChatProvider, DEFAULT_BASE_URLS, isClaude } from './create-chat-provider';
import { createEmbeddingProvider } from './create-embedding-provider';
import { LocalChatProvider } from './local/local-chat.provider';
import { LocalEmbeddingProvider } from './local/local-embedding.provider';
import { collect } from './testing/chat-contract';
import { allowing } from './testing/egress';
import type { LlmSettings } from './types';
import { VertexClaudeChatProvider } from './vertex/vertex-claude-chat.provider';
import { VertexGeminiChatProvider } from './vertex/vertex-gemini-chat.provider';

const SECRET = 'sk-live-PLANTED-factory-000000000';

describe('createChatProvider', () => {
  it.each([
    [{ provider: 'openai', model: 'gpt-5' }, { apiKey: SECRET }, OpenAiChatProvider, 'openai'],
    [{ provider: 'openai', model: 'llama', baseUrl: 'http://127.0.0.1:8000/v1' }, {}, OpenAiChatProvider, 'openai'],
    [
      { provider: 'azure-foundry', model: 'gpt-4o', baseUrl: 'https://r.openai.azure.com', apiVersion: '2024-10-21' },
      { apiKey: SECRET },
      OpenAiChatProvider,
      'azure-foundry',
    ],
    [
      { provider: 'azure-foundry', model: 'claude-opus-4-1', baseUrl: 'https://r.services.ai.azure.com' },
      { apiKey: SECRET },
      AnthropicChatProvider,
      'azure-foundry',
    ],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6' }, { apiKey: SECRET }, AnthropicChatProvider, 'anthropic'],
    [
      { provider: 'bedrock', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0', region: 'eu-central-1' },
      { awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE', awsSecretAccessKey: 'fakeSecretKey0000000000000000000000000000' },
      BedrockChatProvider,
      'bedrock',
    ],
    [
      { provider: 'vertex', model: 'gemini-2.5-pro', gcpProject: 'p' },
      { gcpAccessToken: 'ya29.x' },
      VertexGeminiChatProvider,
      'vertex',
    ],
    [
      { provider: 'vertex', model: 'claude-sonnet-4-5@20250929', gcpProject: 'p' },
      { gcpAccessToken: 'ya29.x' },
      VertexClaudeChatProvider,
      'vertex',
    ],
    [
      { provider: 'vertex', model: 'meta/llama-3.3-70b-instruct-maas', gcpProject: 'p' },
      { gcpAccessToken: 'ya29.x' },
      OpenAiChatProvider,
      'vertex',
    ],
    [{ provider: 'ollama', model: 'llama3.1:8b' }, {}, OllamaChatProvider, 'ollama'],
    [{ provider: 'local', model: 'local' }, {}, LocalChatProvider, 'local'],
  ] as const)('builds %j', (settings, credentials, cls, provider) => {
    // The operator allow-lists the two loopback endpoints (a local vLLM, Ollama's default).
    const adapter = createChatProvider(
      settings as LlmSettings,
      credentials,
      allowing('http://127.0.0.1:8000', DEFAULT_BASE_URLS.ollama),
    );
    expect(adapter).toBeInstanceOf(cls);
    expect(adapter.provider).toBe(provider);
  });

  it.each([
    [{ provider: 'openai', model: 'gpt-5' }, {}, 'provider=openai: apiKey is not set'],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6' }, {}, 'provider=anthropic: apiKey is not set'],
    [
      { provider: 'azure-foundry', model: 'gpt-4o' },
      { apiKey: SECRET },
      'provider=azure-foundry: baseUrl (the resource endpoint) is not set',
    ],
    [{ provider: 'bedrock', model: 'x' }, {}, 'provider=bedrock: region is not set'],
    [{ provider: 'vertex', model: 'gemini-2.5-pro' }, {}, 'provider=vertex: gcpProject is not set'],
    [
      { provider: 'vertex', model: 'gemini-2.5-pro', gcpProject: 'p' },
      { gcpServiceAccountJson: `{"private_key":"${SECRET}"` },
      'provider=vertex: credentials.gcpServiceAccountJson: not valid JSON',
    ],
  ] as const)(
    'refuses %j with 412 llm_not_configured, never echoing a credential',
    (settings, credentials, details) => {
      let caught: unknown;
      try {
        createChatProvider(settings as LlmSettings, credentials);
      } catch (err) {
        caught = err;
      }
      expect(caught).toMatchObject({ status: 412, code: AskErrorCode.LlmNotConfigured, details });
      expect(JSON.stringify(caught) + String(caught)).not.toContain('PLANTED');
    },
  );

  it('streams from the local stand-in with usage', async () => {
    const adapter = createChatProvider({ provider: 'local', model: 'local' }, {});
    const { text, usage } = await collect(
      adapter.streamChat({
        model: 'local',
        messages: [
          {
            role: 'user',
            content: 'Context:\n[1] knowledge · A (score 0.9)\nHNSW is fast.\n\nQuestion: What is fast?',
          },
        ],
        maxTokens: 64,
      }),
    );
    expect(text.length).toBeGreaterThan(0);
    expect(usage?.promptTokens).toBeGreaterThan(0);
  });

  it('knows Claude ids in every spelling', () => {
    expect(
      ['claude-sonnet-4-6', 'anthropic.claude-3-haiku', 'us.anthropic.claude-opus-4-1-v1:0', 'gpt-4o'].map(isClaude),
    ).toEqual([true, true, true, false]);
  });
});

describe('createEmbeddingProvider', () => {
  it('builds the local embedder with the configured dimensions', () => {
    const provider = createEmbeddingProvider({ provider: 'local', model: 'local-lexical-v1', dimensions: 384 }, {});
    expect(provider).toBeInstanceOf(LocalEmbeddingProvider);
    expect(provider.dimensions).toBe(384);
  });

  it('refuses a provider without its required fields', () => {
    expect(() =>
      createEmbeddingProvider({ provider: 'bedrock', model: 'amazon.titan-embed-text-v2:0', dimensions: 1024 }, {}),
    ).toThrow(
      expect.objectContaining({
        code: AskErrorCode.EmbeddingNotConfigured,
        status: 412,
        details: 'embedding provider=bedrock: region is not set',
      }),
    );
  });

  it.each([
    [
      { provider: 'openai' as const, model: 'text-embedding-3-small', dimensions: 256 },
      {},
      'embedding provider=openai: apiKey is not set',
    ],
    [
      {
        provider: 'vertex' as const,
        model: 'text-embedding-005',
        dimensions: 256,
        gcpProject: 'p',
        region: 'us-central1',
      },
      { gcpServiceAccountJson: '{not json' },
      'embedding provider=vertex: credentials.gcpServiceAccountJson: not valid JSON',
    ],
  ])(
    'refuses %j with a missing or broken credential as 412 embedding_not_configured',
    (settings, credentials, details) => {
      expect(() => createEmbeddingProvider(settings, credentials)).toThrow(
        expect.objectContaining({ code: AskErrorCode.EmbeddingNotConfigured, status: 412, details }),
      );
    },
  );
});
