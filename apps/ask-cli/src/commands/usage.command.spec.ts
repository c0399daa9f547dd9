import { formatUsage } from './usage.command';

describe(formatUsage.name, () => {
  it('prints one aligned row per group, the total, and the unpriced note', () => {
    const figures = (calls: number, input: number, cost: string, unpriced = 0) => ({
      calls,
      inputTokens: input,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 10,
      reasoningTokens: 0,
      costUsd: cost,
      unpricedCalls: unpriced,
    });
    const text = formatUsage({
      from: '2026-05-01T00:00:00.000Z',
      to: '2026-05-03T00:00:00.000Z',
      groupBy: 'model',
      groups: [
        { key: 'anthropic/claude-sonnet-4-6', ...figures(2, 3012, '0.011436000000') },
        { key: 'openai/my-finetune', ...figures(1, 5, '0.000000000000', 1) },
      ],
      totals: figures(3, 3017, '0.011436000000', 1),
    });
    expect(text).toBe(
      [
        'usage 2026-05-01T00:00:00.000Z → 2026-05-03T00:00:00.000Z',
        'model                        calls  input  cache_read  cache_write  output  reasoning        cost_usd',
        'anthropic/claude-sonnet-4-6      2   3012           0            0      10          0  0.011436000000',
        'openai/my-finetune               1      5           0            0      10          0  0.000000000000',
        'total                            3   3017           0            0      10          0  0.011436000000',
        '1 call without a price: their tokens are counted, their cost is not',
        '',
      ].join('\n'),
    );
  });
});
