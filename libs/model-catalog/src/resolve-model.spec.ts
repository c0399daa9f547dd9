import { MODEL_CATALOG } from './catalog';
import { findCatalogEntry, normalizeModelId, resolveModel } from './resolve-model';
import type { ProviderId, TokenizerFamily } from './types';

type Row = [provider: ProviderId, model: string, family: string, window: number, tokenizer: TokenizerFamily];

/** Real model ids, one or more per catalog row and provider, with the seed table's windows. */
const KNOWN: Row[] = [
  // Claude 4.x: 200000 on anthropic, bedrock, vertex, azure-foundry
  ['anthropic', 'claude-sonnet-4-6', 'claude-4', 200000, 'claude'],
  ['anthropic', 'claude-opus-4-1-20250805', 'claude-4', 200000, 'claude'],
  ['anthropic', 'claude-sonnet-4-20250514', 'claude-4', 200000, 'claude'],
  ['anthropic', 'claude-haiku-4-5', 'claude-4', 200000, 'claude'],
  ['bedrock', 'anthropic.claude-opus-4-1-20250805-v1:0', 'claude-4', 200000, 'claude'],
  ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-4', 200000, 'claude'],
  ['bedrock', 'global.anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-4', 200000, 'claude'],
  [
    'bedrock',
    'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    'claude-4',
    200000,
    'claude',
  ],
  ['vertex', 'claude-sonnet-4-5@20250929', 'claude-4', 200000, 'claude'],
  ['vertex', 'claude-opus-4-1@20250805', 'claude-4', 200000, 'claude'],
  ['azure-foundry', 'claude-sonnet-4-5', 'claude-4', 200000, 'claude'],
  // GPT-5 family 400000, GPT-4.1 1000000, GPT-4o 128000 on openai and azure-foundry
  ['openai', 'gpt-5', 'gpt-5', 400000, 'o200k_base'],
  ['openai', 'gpt-5-mini', 'gpt-5', 400000, 'o200k_base'],
  ['openai', 'gpt-5-nano-2025-08-07', 'gpt-5', 400000, 'o200k_base'],
  ['azure-foundry', 'gpt-5', 'gpt-5', 400000, 'o200k_base'],
  ['openai', 'gpt-5-chat-latest', 'gpt-5-chat', 128000, 'o200k_base'],
  ['azure-foundry', 'gpt-5-chat', 'gpt-5-chat', 128000, 'o200k_base'],
  ['openai', 'gpt-4.1', 'gpt-4.1', 1000000, 'o200k_base'],
  ['openai', 'gpt-4.1-nano', 'gpt-4.1', 1000000, 'o200k_base'],
  ['openai', 'gpt-4.1-mini-2025-04-14', 'gpt-4.1', 1000000, 'o200k_base'],
  ['azure-foundry', 'gpt-4.1', 'gpt-4.1', 1000000, 'o200k_base'],
  ['openai', 'gpt-4o', 'gpt-4o', 128000, 'o200k_base'],
  ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o', 128000, 'o200k_base'],
  ['openai', 'chatgpt-4o-latest', 'gpt-4o', 128000, 'o200k_base'],
  ['azure-foundry', 'gpt-4o', 'gpt-4o', 128000, 'o200k_base'],
  // o-series 200000 on openai
  ['openai', 'o3', 'o-series', 200000, 'o200k_base'],
  ['openai', 'o4-mini', 'o-series', 200000, 'o200k_base'],
  ['openai', 'o3-2025-04-16', 'o-series', 200000, 'o200k_base'],
  // Gemini 1.5 / 2.x 1000000 on vertex
  ['vertex', 'gemini-2.5-pro', 'gemini', 1000000, 'gemini'],
  ['vertex', 'gemini-1.5-flash-002', 'gemini', 1000000, 'gemini'],
  ['vertex', 'gemini-2.0-flash-001', 'gemini', 1000000, 'gemini'],
  ['vertex', 'publishers/google/models/gemini-2.5-flash', 'gemini', 1000000, 'gemini'],
  // Bedrock open-weight families
  ['bedrock', 'meta.llama4-maverick-17b-instruct-v1:0', 'bedrock-llama-4-maverick', 1000000, 'llama3'],
  ['bedrock', 'us.meta.llama4-maverick-17b-instruct-v1:0', 'bedrock-llama-4-maverick', 1000000, 'llama3'],
  ['bedrock', 'meta.llama3-1-70b-instruct-v1:0', 'bedrock-llama-3.x', 128000, 'llama3'],
  ['bedrock', 'us.meta.llama3-3-70b-instruct-v1:0', 'bedrock-llama-3.x', 128000, 'llama3'],
  ['bedrock', 'meta.llama3-8b-instruct-v1:0', 'bedrock-llama-3', 8192, 'llama3'],
  ['bedrock', 'qwen.qwen3-32b-v1:0', 'bedrock-qwen-3', 128000, 'qwen'],
  ['bedrock', 'qwen.qwen3-coder-30b-a3b-v1:0', 'bedrock-qwen-3', 128000, 'qwen'],
  ['bedrock', 'deepseek.r1-v1:0', 'bedrock-deepseek-r1', 128000, 'deepseek'],
  ['bedrock', 'us.deepseek.r1-v1:0', 'bedrock-deepseek-r1', 128000, 'deepseek'],
  ['bedrock', 'mistral.mistral-large-2407-v1:0', 'bedrock-mistral-large', 128000, 'mistral'],
  ['bedrock', 'mistral.mixtral-8x22b-instruct-v0:1', 'bedrock-mixtral-8x22b', 65536, 'mistral'],
  // Ollama
  ['ollama', 'llama4:scout', 'ollama-llama-4', 1048576, 'llama3'],
  ['ollama', 'llama4', 'ollama-llama-4', 1048576, 'llama3'],
  ['ollama', 'gemma4:26b', 'ollama-gemma-4-large', 262144, 'gemma'],
  ['ollama', 'gemma4:31b', 'ollama-gemma-4-large', 262144, 'gemma'],
  ['ollama', 'qwen3-coder:30b', 'ollama-qwen3-coder', 262144, 'qwen'],
  ['ollama', 'qwen3:14b', 'ollama-qwen', 128000, 'qwen'],
  ['ollama', 'qwen2.5:7b', 'ollama-qwen', 128000, 'qwen'],
  ['ollama', 'qwen2:7b', 'ollama-qwen', 128000, 'qwen'],
  ['ollama', 'llama3.1:8b', 'ollama-llama-3.x', 128000, 'llama3'],
  ['ollama', 'llama3.2', 'ollama-llama-3.x', 128000, 'llama3'],
  ['ollama', 'llama3.3:70b', 'ollama-llama-3.x', 128000, 'llama3'],
  ['ollama', 'deepseek-r1:14b', 'ollama-deepseek-r1', 128000, 'deepseek'],
  ['ollama', 'gemma3:27b', 'ollama-gemma-3', 128000, 'gemma'],
  ['ollama', 'gemma3:1b', 'ollama-gemma-3-small', 32768, 'gemma'],
  ['ollama', 'gemma4:e4b', 'ollama-gemma-4-small', 128000, 'gemma'],
  ['ollama', 'gemma4', 'ollama-gemma-4-small', 128000, 'gemma'],
  ['ollama', 'gpt-oss:20b', 'ollama-gpt-oss', 128000, 'gptoss'],
  ['ollama', 'mistral-nemo', 'ollama-mistral-nemo-small', 128000, 'mistral'],
  ['ollama', 'mistral-small', 'ollama-mistral-nemo-small', 128000, 'mistral'],
  ['ollama', 'mistral-small3.2:24b', 'ollama-mistral-nemo-small', 128000, 'mistral'],
  ['ollama', 'mistral:7b', 'ollama-mistral-7b', 32768, 'mistral'],
  ['ollama', 'mistral', 'ollama-mistral-7b', 32768, 'mistral'],
  ['ollama', 'phi4', 'ollama-phi-4', 16384, 'unknown'],
  ['ollama', 'codellama:13b', 'ollama-code-llama', 16384, 'llama2'],
  ['ollama', 'deepseek-coder:6.7b', 'ollama-deepseek-coder', 16384, 'unknown'],
  ['ollama', 'llama3:8b', 'ollama-llama-3', 8192, 'llama3'],
  ['ollama', 'llama3', 'ollama-llama-3', 8192, 'llama3'],
  ['ollama', 'gemma2:9b', 'ollama-gemma-1-2', 8192, 'unknown'],
  ['ollama', 'gemma:7b', 'ollama-gemma-1-2', 8192, 'unknown'],
  ['ollama', 'codegemma', 'ollama-codegemma', 8192, 'unknown'],
  ['ollama', 'smollm2', 'ollama-smollm2', 8192, 'unknown'],
  ['ollama', 'smollm2:1.7b', 'ollama-smollm2', 8192, 'unknown'],
  ['ollama', 'llama2:13b', 'ollama-llama-2', 4096, 'llama2'],
  ['ollama', 'olmo2:7b', 'ollama-olmo-2', 4096, 'unknown'],
  ['ollama', 'registry.ollama.ai/library/llama3.1:8b', 'ollama-llama-3.x', 128000, 'llama3'],
  // The embedded stand-in
  ['local', 'stand-in', 'local', 8192, 'unknown'],
  ['local', 'anything-at-all', 'local', 8192, 'unknown'],
];

/** Ids no row matches on that provider: 32000, or 128000 on Ollama (seed 000). */
const UNKNOWN: Array<[provider: ProviderId, model: string, window: number]> = [
  ['openai', 'my-finetune', 32000],
  ['openai', 'o1-preview', 32000],
  ['anthropic', 'claude-3-5-sonnet-20241022', 32000],
  ['azure-foundry', 'mistral-large-2411', 32000],
  ['azure-foundry', 'o3', 32000],
  ['bedrock', 'mistral.mistral-large-2402-v1:0', 32000],
  ['bedrock', 'gpt-4o', 32000],
  ['vertex', 'gemini-3-pro', 32000],
  ['vertex', 'meta/llama-3.3-70b-instruct-maas', 32000],
  ['anthropic', 'gemini-2.5-pro', 32000],
  ['ollama', 'my-custom-model:latest', 128000],
  ['ollama', 'claude-sonnet-4-6', 128000],
  ['ollama', 'hf.co/bartowski/some-model-gguf:q4_k_m', 128000],
];

describe(resolveModel.name, () => {
  it.each(KNOWN)('resolves %s %s to %s with %i tokens (%s)', (provider, model, family, window, tokenizer) => {
    const resolved = resolveModel({ provider, model });
    expect(resolved).toMatchObject({
      provider,
      model,
      family,
      tokenizer,
      catalogWindow: window,
      window,
      matched: true,
    });
    expect(resolved.source.length).toBeGreaterThan(0);
  });

  it('covers every catalog row on every provider it names', () => {
    for (const entry of MODEL_CATALOG) {
      for (const provider of entry.providers) {
        const covered = KNOWN.some(([p, , family]) => p === provider && family === entry.family);
        expect(`${entry.family} on ${provider}: ${covered}`).toBe(`${entry.family} on ${provider}: true`);
      }
    }
  });

  it.each(UNKNOWN)('gives unknown %s model %s the default of %i tokens', (provider, model, window) => {
    expect(resolveModel({ provider, model })).toMatchObject({
      family: 'unknown',
      tokenizer: 'unknown',
      catalogWindow: window,
      window,
      matched: false,
    });
  });

  it('keeps the catalog window for a known model behind a custom base_url', () => {
    expect(resolveModel({ provider: 'openai', model: 'gpt-4o', baseUrl: 'https://gw.example/v1' }).window).toBe(128000);
  });

  it('gives an unknown model on a custom base_url 32000 tokens', () => {
    expect(resolveModel({ provider: 'openai', model: 'llama-70b', baseUrl: 'https://gw.example/v1' }).window).toBe(
      32000,
    );
  });

  it.each([
    // [model, provider, contextWindow, maxContextTokens, catalogWindow, window]
    ['gpt-4o', 'openai', undefined, undefined, 128000, 128000],
    ['gpt-4o', 'openai', 64000, undefined, 128000, 64000],
    ['llama3.1:8b', 'ollama', 32768, undefined, 128000, 32768],
    ['llama3:8b', 'ollama', 16384, undefined, 8192, 16384],
    ['claude-sonnet-4-6', 'anthropic', undefined, 50000, 200000, 50000],
    ['claude-sonnet-4-6', 'anthropic', undefined, 300000, 200000, 200000],
    ['gpt-4.1', 'openai', 500000, 100000, 1000000, 100000],
    ['gpt-4.1', 'openai', 100000, 500000, 1000000, 100000],
    ['my-model', 'ollama', undefined, 8000, 128000, 8000],
  ] as Array<[string, ProviderId, number | undefined, number | undefined, number, number]>)(
    'plans %s on %s with contextWindow %p and maxContextTokens %p against %i → %i tokens',
    (model, provider, contextWindow, maxContextTokens, catalogWindow, window) => {
      expect(resolveModel({ provider, model }, { contextWindow, maxContextTokens })).toMatchObject({
        catalogWindow,
        window,
      });
    },
  );

  it.each([0, -1, 1.5, Number.NaN, Infinity])('rejects a contextWindow of %p with a RangeError', (value) => {
    expect(() => resolveModel({ provider: 'openai', model: 'gpt-4o' }, { contextWindow: value })).toThrow(RangeError);
  });

  it.each([0, -100, 0.5])('rejects a maxContextTokens of %p with a RangeError', (value) => {
    expect(() => resolveModel({ provider: 'openai', model: 'gpt-4o' }, { maxContextTokens: value })).toThrow(
      RangeError,
    );
  });
});

describe(normalizeModelId.name, () => {
  it.each([
    ['  Claude-Sonnet-4-6 ', 'claude-sonnet-4-6'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic.claude-sonnet-4-5-20250929-v1:0'],
    ['apac.meta.llama3-1-70b-instruct-v1:0', 'meta.llama3-1-70b-instruct-v1:0'],
    ['arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-1-70b-instruct-v1:0', 'meta.llama3-1-70b-instruct-v1:0'],
    ['projects/p/locations/us-east5/publishers/google/models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['library/qwen3:14b', 'qwen3:14b'],
    ['mistral.mistral-large-2407-v1:0', 'mistral.mistral-large-2407-v1:0'],
  ])('normalises %p to %p', (input, expected) => {
    expect(normalizeModelId(input)).toBe(expected);
  });
});

describe(findCatalogEntry.name, () => {
  it('returns undefined when no row serves the provider', () => {
    expect(findCatalogEntry({ provider: 'ollama', model: 'gpt-4o' })).toBeUndefined();
  });

  it('matches Llama 3.x before Llama 3 on Ollama', () => {
    expect(findCatalogEntry({ provider: 'ollama', model: 'llama3.1:8b' })?.maxInputTokens).toBe(128000);
    expect(findCatalogEntry({ provider: 'ollama', model: 'llama3:8b' })?.maxInputTokens).toBe(8192);
  });
});
