import { LOCAL_CATALOG_ENTRY, MODEL_CATALOG, unknownModelWindow } from './catalog';

/** Every (provider, family) window of the seed 000 MaxInputTokens table, in tokens. */
const SEED_TABLE: Array<[family: string, providers: string[], maxInputTokens: number]> = [
  ['claude-4', ['anthropic', 'bedrock', 'vertex', 'azure-foundry'], 200000],
  ['gpt-5', ['openai', 'azure-foundry'], 400000],
  ['gpt-4.1', ['openai', 'azure-foundry'], 1000000],
  ['gpt-4o', ['openai', 'azure-foundry'], 128000],
  ['o-series', ['openai'], 200000],
  ['gemini', ['vertex'], 1000000],
  ['bedrock-llama-4-maverick', ['bedrock'], 1000000],
  ['bedrock-llama-3.x', ['bedrock'], 128000],
  ['bedrock-qwen-3', ['bedrock'], 128000],
  ['bedrock-deepseek-r1', ['bedrock'], 128000],
  ['bedrock-mistral-large', ['bedrock'], 128000],
  ['bedrock-mixtral-8x22b', ['bedrock'], 65536],
  ['ollama-llama-4', ['ollama'], 1048576],
  ['ollama-gemma-4-large', ['ollama'], 262144],
  ['ollama-qwen3-coder', ['ollama'], 262144],
  ['ollama-qwen', ['ollama'], 128000],
  ['ollama-llama-3.x', ['ollama'], 128000],
  ['ollama-deepseek-r1', ['ollama'], 128000],
  ['ollama-gemma-3', ['ollama'], 128000],
  ['ollama-gemma-4-small', ['ollama'], 128000],
  ['ollama-gpt-oss', ['ollama'], 128000],
  ['ollama-mistral-nemo-small', ['ollama'], 128000],
  ['ollama-mistral-7b', ['ollama'], 32768],
  ['ollama-phi-4', ['ollama'], 16384],
  ['ollama-code-llama', ['ollama'], 16384],
  ['ollama-deepseek-coder', ['ollama'], 16384],
  ['ollama-llama-3', ['ollama'], 8192],
  ['ollama-gemma-1-2', ['ollama'], 8192],
  ['ollama-codegemma', ['ollama'], 8192],
  ['ollama-smollm2', ['ollama'], 8192],
  ['ollama-llama-2', ['ollama'], 4096],
  ['ollama-olmo-2', ['ollama'], 4096],
];

describe('MODEL_CATALOG', () => {
  it.each(SEED_TABLE)('holds the seed row %s on %j with %i tokens', (family, providers, maxInputTokens) => {
    const entry = MODEL_CATALOG.find((e) => e.family === family);
    expect(entry).toBeDefined();
    expect([...(entry?.providers ?? [])].sort()).toEqual([...providers].sort());
    expect(entry?.maxInputTokens).toBe(maxInputTokens);
    expect(entry?.seedRow).toContain(String(maxInputTokens));
    expect(entry?.source).toMatch(/^seed 000 MaxInputTokens table; https:\/\//);
  });

  it('marks every row not in the seed table as such, with a documentation source', () => {
    const seedFamilies = new Set(SEED_TABLE.map(([family]) => family));
    for (const entry of MODEL_CATALOG.filter((e) => !seedFamilies.has(e.family))) {
      expect(entry.seedRow).toBeNull();
      expect(entry.source.length).toBeGreaterThan(20);
    }
  });

  it('has unique family ids and positive whole-number windows', () => {
    expect(new Set(MODEL_CATALOG.map((e) => e.family)).size).toBe(MODEL_CATALOG.length);
    for (const entry of MODEL_CATALOG) {
      expect(Number.isInteger(entry.maxInputTokens) && entry.maxInputTokens > 0).toBe(true);
      expect(entry.patterns.length).toBeGreaterThan(0);
    }
  });

  it('ends with the embedded stand-in at 8192 tokens', () => {
    expect(MODEL_CATALOG[MODEL_CATALOG.length - 1]).toBe(LOCAL_CATALOG_ENTRY);
    expect(LOCAL_CATALOG_ENTRY).toMatchObject({ providers: ['local'], maxInputTokens: 8192 });
  });
});

describe(unknownModelWindow.name, () => {
  it.each([
    ['ollama', 128000],
    ['openai', 32000],
    ['anthropic', 32000],
    ['azure-foundry', 32000],
    ['bedrock', 32000],
    ['vertex', 32000],
    ['local', 32000],
  ] as const)('gives %s %i tokens', (provider, window) => {
    expect(unknownModelWindow(provider)).toBe(window);
  });
});
