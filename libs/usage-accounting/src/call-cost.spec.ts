import { findPrice } from '@ask/model-catalog';
import { callCostUsd, formatPicoUsd } from './call-cost';
import { normalizeUsage } from './normalize-usage';

describe(callCostUsd.name, () => {
  const sonnet = findPrice({ provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' })!;

  it('prices Anthropic turn 1 (3,000 written to the cache) at the cache-write price', () => {
    const usage = normalizeUsage('anthropic', {
      input_tokens: 12,
      cache_creation_input_tokens: 3000,
      output_tokens: 0,
    })!;
    // 12 × 3 + 3,000 × 3.75 = 11,286 micro-dollars.
    expect(callCostUsd(usage, sonnet)).toBe('0.011286000000');
  });

  it('prices Anthropic turn 2 (3,000 read from the cache) at the cache-read price', () => {
    const usage = normalizeUsage('anthropic', { input_tokens: 15, cache_read_input_tokens: 3000, output_tokens: 100 })!;
    // 15 × 3 + 3,000 × 0.3 + 100 × 15 = 2,445 micro-dollars.
    expect(callCostUsd(usage, sonnet)).toBe('0.002445000000');
  });

  it('bills OpenAI cached tokens once, at the cached price, not also at the full price', () => {
    const mini = findPrice({ provider: 'openai', model: 'gpt-4o-mini' })!;
    const usage = normalizeUsage('openai', {
      prompt_tokens: 3015,
      completion_tokens: 7,
      prompt_tokens_details: { cached_tokens: 3000 },
    })!;
    // 15 × 0.15 + 3,000 × 0.075 + 7 × 0.6 = 2.25 + 225 + 4.2 = 231.45 micro-dollars.
    expect(callCostUsd(usage, mini)).toBe('0.000231450000');
  });

  it('prices self-hosted calls at zero', () => {
    const local = findPrice({ provider: 'local', model: 'local-extractive' })!;
    expect(callCostUsd({ input: 900, cacheRead: 0, cacheWrite: 0, output: 40, reasoning: 0 }, local)).toBe(
      '0.000000000000',
    );
  });

  it('refuses a price with more than six decimals instead of rounding it', () => {
    expect(() =>
      callCostUsd(
        { input: 1, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
        { input: 0.0000001, cacheRead: 0, cacheWrite: 0, output: 0 },
      ),
    ).toThrow(RangeError);
  });
});

describe(formatPicoUsd.name, () => {
  it('writes twelve decimals', () => {
    expect(formatPicoUsd(1n)).toBe('0.000000000001');
    expect(formatPicoUsd(12_345_000_000_000n)).toBe('12.345000000000');
  });
});
