import { findPrice, parsePriceOverrides, PRICE_TABLE } from './prices';

describe('PRICE_TABLE', () => {
  it('gives every row a source and an ISO date', () => {
    for (const row of PRICE_TABLE) {
      expect(row.source).not.toBe('');
      expect(row.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });
});

describe(findPrice.name, () => {
  it.each([
    ['anthropic', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4'],
    ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4'],
    ['vertex', 'claude-opus-4-1@20250805', 'claude-opus-4'],
    ['anthropic', 'claude-opus-4-5', 'claude-opus-4.5'],
    ['anthropic', 'claude-haiku-4-5', 'claude-haiku-4.5'],
    ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['openai', 'gpt-4o', 'gpt-4o'],
    ['azure-foundry', 'gpt-5-mini', 'gpt-5-mini'],
    ['openai', 'gpt-5', 'gpt-5'],
    ['openai', 'gpt-4.1-nano', 'gpt-4.1-nano'],
    ['vertex', 'gemini-2.5-flash', 'gemini-2.5-flash'],
    ['openai', 'text-embedding-3-small', 'text-embedding-3-small'],
    ['azure-foundry', 'text-embedding-3-large', 'text-embedding-3-large'],
    ['openai', 'text-embedding-ada-002', 'text-embedding-ada-002'],
    ['ollama', 'nomic-embed-text', 'self-hosted'],
    ['ollama', 'llama3.1:8b', 'self-hosted'],
    ['local', 'local-extractive', 'self-hosted'],
  ] as const)('%s %s is priced by %s', (provider, model, family) => {
    expect(findPrice({ provider, model })?.family).toBe(family);
  });

  it('leaves a model it does not know unpriced', () => {
    expect(findPrice({ provider: 'openai', model: 'my-finetune' })).toBeUndefined();
    expect(findPrice({ provider: 'vertex', model: 'gemini-2.5-flash-lite' })).toBeUndefined();
  });

  it("lets the operator's override win over the table", () => {
    const overrides = parsePriceOverrides(
      '[{"model":"^gpt-4o-mini","input":0.1,"cacheRead":0.05,"cacheWrite":0,"output":0.4,"source":"contract 2025-12"}]',
    );
    expect(findPrice({ provider: 'openai', model: 'gpt-4o-mini' }, overrides)).toEqual({
      family: 'override:^gpt-4o-mini',
      source: 'contract 2025-12',
      asOf: null,
      input: 0.1,
      cacheRead: 0.05,
      cacheWrite: 0,
      output: 0.4,
    });
  });
});

describe(parsePriceOverrides.name, () => {
  it('reads nothing from an unset value', () => expect(parsePriceOverrides(undefined)).toEqual([]));
  it('refuses a negative price', () => {
    expect(() => parsePriceOverrides('[{"model":"x","input":-1,"cacheRead":0,"cacheWrite":0,"output":0}]')).toThrow(
      'price override 0: input must be a number ≥ 0',
    );
  });
  it('refuses a bad pattern', () => {
    expect(() => parsePriceOverrides('[{"model":"(","input":1,"cacheRead":0,"cacheWrite":0,"output":0}]')).toThrow(
      SyntaxError,
    );
  });
});
