import { resolveModel, type ModelRef } from '@ask/model-catalog';
import { budgetShortfall, computeBudget } from './budget';

describe(computeBudget.name, () => {
  it.each([
    // [case, window, maxTokens, exact, margin, available], issue 3's figures first
    ['window 8192, approximate, max_tokens 1024', 8192, 1024, false, 1229, 5339],
    ['window 128000, exact (gpt-4o)', 128000, undefined, true, 6400, 118952],
    ['window 32000, approximate (unknown model, custom base_url)', 32000, undefined, false, 4800, 24552],
    ['window 128000, approximate (unknown Ollama model)', 128000, undefined, false, 19200, 106152],
    ['window 32768, approximate (Mistral 7B on Ollama)', 32768, undefined, false, 4916, 25204],
    ['window 200000, exact (Claude direct)', 200000, undefined, true, 10000, 187352],
    ['window 1000000, exact (GPT-4.1)', 1000000, undefined, true, 50000, 947352],
    ['window 4096, approximate (Llama 2 on Ollama)', 4096, undefined, false, 615, 833],
    ['window 2800, approximate (max_tokens 2048): nothing left', 2800, undefined, false, 420, -268],
  ] as Array<[string, number, number | undefined, boolean, number, number]>)(
    'budgets %s: margin %i, available %i',
    (_label, window, maxTokens, exact, margin, available) => {
      expect(computeBudget({ window, maxTokens, exact })).toEqual({
        window,
        maxTokens: maxTokens ?? 2048,
        reserve: 600,
        margin,
        available,
        exact,
      });
    },
  );

  it.each([
    // the figures, with the window taken from the catalog
    [{ provider: 'openai', model: 'gpt-4o' }, true, 118952],
    [{ provider: 'openai', model: 'my-proxy-model', baseUrl: 'https://gw.example/v1' }, false, 24552],
    [{ provider: 'ollama', model: 'some-new-model:7b' }, false, 106152],
    [{ provider: 'ollama', model: 'mistral:7b' }, false, 25204],
  ] as Array<[ModelRef, boolean, number]>)('gives %j (exact %p) %i available tokens', (ref, exact, available) => {
    expect(computeBudget({ window: resolveModel(ref).window, exact }).available).toBe(available);
  });

  it.each([
    // [marginPercent, margin, available] at window 8192, max_tokens 2048, reserve 600
    [5, 410, 5134],
    [6.24, 512, 5032],
    [6.25, 512, 5032],
    [15, 1229, 4315],
    [16.63, 1363, 4181],
  ])(
    'takes a margin sized from evidence: %d%% of 8192 → margin %i, available %i',
    (marginPercent, margin, available) => {
      expect(computeBudget({ window: 8192, exact: false, marginPercent })).toEqual({
        window: 8192,
        maxTokens: 2048,
        reserve: 600,
        margin,
        available,
        exact: false,
      });
    },
  );

  it.each([4.99, 100.5, Number.NaN])('refuses a margin of %d%% (below the exact 5% or above 100)', (marginPercent) => {
    expect(() => computeBudget({ window: 8192, exact: false, marginPercent })).toThrow(RangeError);
  });

  it('uses a custom reserve', () => {
    expect(computeBudget({ window: 10000, maxTokens: 1000, reserve: 0, exact: true }).available).toBe(8500);
  });

  it.each([
    ['a zero window', { window: 0, exact: true }],
    ['a fractional window', { window: 1000.5, exact: true }],
    ['a NaN window', { window: Number.NaN, exact: true }],
    ['zero max_tokens', { window: 8192, maxTokens: 0, exact: true }],
    ['max_tokens equal to the window', { window: 8192, maxTokens: 8192, exact: true }],
    ['a negative reserve', { window: 8192, reserve: -1, exact: true }],
  ])('throws a RangeError for %s', (_label, input) => {
    expect(() => computeBudget(input)).toThrow(RangeError);
  });
});

describe(budgetShortfall.name, () => {
  it.each([
    // [case, window, maxTokens, exact, expected]
    [
      'maxTokens equal to the window (local 8,192)',
      8192,
      8192,
      true,
      { window: 8192, maxTokens: 8192, reserve: 600, margin: 410, available: -1010 },
    ],
    [
      'maxTokens far above the window',
      8192,
      128000,
      true,
      { window: 8192, maxTokens: 128000, reserve: 600, margin: 410, available: -120818 },
    ],
    [
      'a cap of 1,024 under the default maxTokens',
      1024,
      undefined,
      false,
      { window: 1024, maxTokens: 2048, reserve: 600, margin: 154, available: -1778 },
    ],
    ['exactly one token left', 8192, 7181, true, undefined],
    ['the demo (local, 8,192, default maxTokens)', 8192, undefined, true, undefined],
  ] as Array<[string, number, number | undefined, boolean, object | undefined]>)(
    '%s',
    (_label, window, maxTokens, exact, expected) => {
      expect(budgetShortfall({ window, maxTokens, exact })).toEqual(expected);
    },
  );

  it("takes the calibrated estimate's margin: settings short at the seed's 15% fit at a project's 5%", () => {
    // 4096 − 2048 − 600 = 1448: 15% (615) leaves 833, 35% (1434) leaves 14, 36% (1475) leaves none.
    expect(budgetShortfall({ window: 4096, maxTokens: 2048, exact: false, marginPercent: 36 })).toEqual({
      window: 4096,
      maxTokens: 2048,
      reserve: 600,
      margin: 1475,
      available: -27,
    });
    // 3000 − 2048 − 600 = 352: the seed's 15% (450) leaves none, a calibrated 5% (150) leaves 202.
    expect(budgetShortfall({ window: 3000, maxTokens: 2048, exact: false })?.available).toBe(-98);
    expect(budgetShortfall({ window: 3000, maxTokens: 2048, exact: false, marginPercent: 5 })).toBeUndefined();
    // Outside [5, 100], or with an exact counter: the seed's margin.
    expect(budgetShortfall({ window: 3000, maxTokens: 2048, exact: false, marginPercent: 2 })?.margin).toBe(450);
    expect(budgetShortfall({ window: 3000, maxTokens: 2450, exact: true, marginPercent: 50 })?.margin).toBe(150);
  });
});
