import { normalizeModelId } from './resolve-model';
import type { ModelRef, ProviderId } from './types';

/**
 * One row of the price table: a model family's list prices in USD per million tokens (MTok), with
 * where each figure comes from and the date it was read there. Prices change; an operator overrides a
 * row (or adds one) with `ASK_PRICE_OVERRIDES` (see {@link parsePriceOverrides}), and each call row
 * stores the cost at the price in force when it was made, never re-priced later.
 */
export interface PriceEntry {
  /** Stable id of the price row, e.g. `claude-sonnet-4`, `gpt-4o-mini`. */
  readonly family: string;
  readonly displayName: string;
  /** Providers that bill this family at these prices. */
  readonly providers: readonly ProviderId[];
  /** USD per MTok of input not read from a cache (OpenTelemetry input minus cache read and write). */
  readonly input: number;
  /** USD per MTok read from the prompt cache. */
  readonly cacheRead: number;
  /** USD per MTok written to the prompt cache (Anthropic's 5-minute write; 0 where writes are free). */
  readonly cacheWrite: number;
  /** USD per MTok of output, reasoning included. */
  readonly output: number;
  /** The page the prices were copied from. */
  readonly source: string;
  /** ISO date the prices were read at `source`. */
  readonly asOf: string;
  /** Tested, in order, against the normalised model id (`normalizeModelId`); the first row that matches wins. */
  readonly patterns: readonly RegExp[];
}

const ANTHROPIC_PRICES = 'https://docs.claude.com/en/docs/about-claude/pricing';
const OPENAI_MODELS = 'https://developers.openai.com/api/docs/models';
const VERTEX_PRICES = 'https://cloud.google.com/vertex-ai/generative-ai/pricing';
const AS_OF = '2025-11-20';
/** The day the OpenAI and Gemini rows were checked against stored copies of the providers' pages. */
const CHECKED = '2026-12-01';
/**
 * Source of a row whose figures no provider page confirmed: the search of stored copies of the
 * provider's pages on {@link CHECKED} found none for the model, so the figures are the table's first
 * version (2025-11-20), unconfirmed; an operator who bills on them should set `ASK_PRICE_OVERRIDES`.
 */
const unconfirmed = (page: string) =>
  `not confirmed: no provider page with this model's price found on ${CHECKED} (looked for ${page}); figures unchanged since ${AS_OF}`;

/**
 * The built-in price table (standard tier, no batch discount; Gemini's ≤ 200K-token prompt tier).
 * Anthropic's prices apply to Claude on Bedrock, Vertex and Foundry too (list prices are the same).
 * `local` and Ollama are self-hosted: priced 0 so their calls are costed rather than unknown.
 * Rows no provider page confirmed say so in `source` (see {@link unconfirmed}); docs/telemetry.md lists which.
 */
export const PRICE_TABLE: readonly PriceEntry[] = [
  {
    family: 'claude-opus-4.5',
    displayName: 'Claude Opus 4.5 and later 4.x',
    providers: ['anthropic', 'bedrock', 'vertex', 'azure-foundry'],
    input: 5,
    cacheRead: 0.5,
    cacheWrite: 6.25,
    output: 25,
    source: ANTHROPIC_PRICES,
    asOf: AS_OF,
    patterns: [/^(anthropic\.)?claude-opus-4-([5-9]|\d\d)/],
  },
  {
    family: 'claude-opus-4',
    displayName: 'Claude Opus 4 / 4.1',
    providers: ['anthropic', 'bedrock', 'vertex', 'azure-foundry'],
    input: 15,
    cacheRead: 1.5,
    cacheWrite: 18.75,
    output: 75,
    source: ANTHROPIC_PRICES,
    asOf: AS_OF,
    patterns: [/^(anthropic\.)?claude-opus-4(?!\d)/],
  },
  {
    family: 'claude-sonnet-4',
    displayName: 'Claude Sonnet 4.x',
    providers: ['anthropic', 'bedrock', 'vertex', 'azure-foundry'],
    input: 3,
    cacheRead: 0.3,
    cacheWrite: 3.75,
    output: 15,
    source: ANTHROPIC_PRICES,
    asOf: AS_OF,
    patterns: [/^(anthropic\.)?claude-sonnet-4(?!\d)/],
  },
  {
    family: 'claude-haiku-4.5',
    displayName: 'Claude Haiku 4.5',
    providers: ['anthropic', 'bedrock', 'vertex', 'azure-foundry'],
    input: 1,
    cacheRead: 0.1,
    cacheWrite: 1.25,
    output: 5,
    source: ANTHROPIC_PRICES,
    asOf: AS_OF,
    patterns: [/^(anthropic\.)?claude-haiku-4-5/],
  },
  {
    family: 'gpt-5-nano',
    displayName: 'GPT-5 nano',
    providers: ['openai', 'azure-foundry'],
    input: 0.05,
    cacheRead: 0.005,
    cacheWrite: 0,
    output: 0.4,
    source: `${OPENAI_MODELS}/gpt-5-nano (input $0.05, cached input $0.005, output $0.40 per 1M tokens)`,
    asOf: CHECKED,
    patterns: [/^gpt-5-nano/],
  },
  {
    family: 'gpt-5-mini',
    displayName: 'GPT-5 mini',
    providers: ['openai', 'azure-foundry'],
    input: 0.25,
    cacheRead: 0.025,
    cacheWrite: 0,
    output: 2,
    source: `${OPENAI_MODELS}/gpt-5-mini (input $0.25, cached input $0.025, output $2.00 per 1M tokens)`,
    asOf: CHECKED,
    patterns: [/^gpt-5-mini/],
  },
  {
    family: 'gpt-5',
    displayName: 'GPT-5',
    providers: ['openai', 'azure-foundry'],
    input: 1.25,
    cacheRead: 0.125,
    cacheWrite: 0,
    output: 10,
    source: `input: ${OPENAI_MODELS}/gpt-5-codex and /gpt-5-pro (their comparison rows: GPT-5 input $1.25 per 1M tokens); cached input and output not confirmed: no page of gpt-5 itself found on ${CHECKED}, figures unchanged since ${AS_OF} (GPT-5-Codex, listed at the same input price, is $0.125 cached and $10 output)`,
    asOf: CHECKED,
    patterns: [/^gpt-5(?![\d.])(?!-(mini|nano))/],
  },
  {
    family: 'gpt-4.1-nano',
    displayName: 'GPT-4.1 nano',
    providers: ['openai', 'azure-foundry'],
    input: 0.1,
    cacheRead: 0.025,
    cacheWrite: 0,
    output: 0.4,
    source: unconfirmed(`${OPENAI_MODELS}/gpt-4.1-nano`),
    asOf: AS_OF,
    patterns: [/^gpt-4\.1-nano/],
  },
  {
    family: 'gpt-4.1-mini',
    displayName: 'GPT-4.1 mini',
    providers: ['openai', 'azure-foundry'],
    input: 0.4,
    cacheRead: 0.1,
    cacheWrite: 0,
    output: 1.6,
    source: unconfirmed(`${OPENAI_MODELS}/gpt-4.1-mini`),
    asOf: AS_OF,
    patterns: [/^gpt-4\.1-mini/],
  },
  {
    family: 'gpt-4.1',
    displayName: 'GPT-4.1',
    providers: ['openai', 'azure-foundry'],
    input: 2,
    cacheRead: 0.5,
    cacheWrite: 0,
    output: 8,
    source: unconfirmed(`${OPENAI_MODELS}/gpt-4.1`),
    asOf: AS_OF,
    patterns: [/^gpt-4\.1(?!\d)/],
  },
  {
    family: 'gpt-4o-mini',
    displayName: 'GPT-4o mini',
    providers: ['openai', 'azure-foundry'],
    input: 0.15,
    cacheRead: 0.075,
    cacheWrite: 0,
    output: 0.6,
    source: unconfirmed(`${OPENAI_MODELS}/gpt-4o-mini`),
    asOf: AS_OF,
    patterns: [/^gpt-4o-mini/],
  },
  {
    family: 'gpt-4o',
    displayName: 'GPT-4o',
    providers: ['openai', 'azure-foundry'],
    input: 2.5,
    cacheRead: 1.25,
    cacheWrite: 0,
    output: 10,
    source: unconfirmed(`${OPENAI_MODELS}/gpt-4o`),
    asOf: AS_OF,
    patterns: [/^gpt-4o(?!-mini)/],
  },
  {
    family: 'gemini-2.5-pro',
    displayName: 'Gemini 2.5 Pro (prompts ≤ 200K tokens)',
    providers: ['vertex'],
    input: 1.25,
    cacheRead: 0.125,
    cacheWrite: 0,
    output: 10,
    source: unconfirmed(VERTEX_PRICES),
    asOf: AS_OF,
    patterns: [/^gemini-2\.5-pro/],
  },
  {
    family: 'gemini-2.5-flash',
    displayName: 'Gemini 2.5 Flash',
    providers: ['vertex'],
    input: 0.3,
    cacheRead: 0.03,
    cacheWrite: 0,
    output: 2.5,
    source: unconfirmed(VERTEX_PRICES),
    asOf: AS_OF,
    patterns: [/^gemini-2\.5-flash(?!-lite)/],
  },
  {
    family: 'text-embedding-3-small',
    displayName: 'OpenAI text-embedding-3-small (embeddings: input only)',
    providers: ['openai', 'azure-foundry'],
    input: 0.02,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    source: `${OPENAI_MODELS}/text-embedding-3-large (its comparison row: text-embedding-3-small $0.02 per 1M tokens)`,
    asOf: CHECKED,
    patterns: [/^text-embedding-3-small/],
  },
  {
    family: 'text-embedding-3-large',
    displayName: 'OpenAI text-embedding-3-large (embeddings: input only)',
    providers: ['openai', 'azure-foundry'],
    input: 0.13,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    source: `${OPENAI_MODELS}/text-embedding-3-large ($0.13 per 1M tokens)`,
    asOf: CHECKED,
    patterns: [/^text-embedding-3-large/],
  },
  {
    family: 'text-embedding-ada-002',
    displayName: 'OpenAI text-embedding-ada-002 (embeddings: input only)',
    providers: ['openai', 'azure-foundry'],
    input: 0.1,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    source: unconfirmed(`${OPENAI_MODELS}/text-embedding-ada-002`),
    asOf: AS_OF,
    patterns: [/^text-embedding-ada-002/],
  },
  {
    family: 'self-hosted',
    displayName: 'Self-hosted (Ollama, embedded local stand-in)',
    providers: ['ollama', 'local'],
    input: 0,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    source: 'self-hosted: no per-token price',
    asOf: AS_OF,
    patterns: [/.*/],
  },
];

/** The four prices of one row, USD per MTok. */
export type Prices = Pick<PriceEntry, 'input' | 'cacheRead' | 'cacheWrite' | 'output'>;

/** An operator's price row (`ASK_PRICE_OVERRIDES`): a model id pattern (a regular expression source) and its prices. */
export interface PriceOverride extends Prices {
  /** Tested against the normalised model id, like a table row's patterns. */
  model: string;
  /** Limits the override to one provider; all providers when absent. */
  provider?: ProviderId;
  /** Where the operator's figure comes from (a contract, an invoice); defaults to `operator override`. */
  source?: string;
}

/**
 * Parses the operator's override list: a JSON array of {@link PriceOverride}. Every price is a finite
 * number ≥ 0 in USD per MTok and every `model` a valid regular expression.
 * @throws Error naming the first bad entry (config validation turns it into a boot failure).
 */
export function parsePriceOverrides(json: string | undefined): PriceOverride[] {
  if (json === undefined || json.trim() === '') return [];
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error('price overrides must be a JSON array');
  return parsed.map((entry: unknown, i) => {
    const e = entry as Partial<PriceOverride>;
    if (typeof e !== 'object' || e === null || typeof e.model !== 'string' || e.model === '')
      throw new Error(`price override ${i}: model (a pattern) is required`);
    new RegExp(e.model);
    for (const field of ['input', 'cacheRead', 'cacheWrite', 'output'] as const) {
      const v = e[field];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw new Error(`price override ${i}: ${field} must be a number ≥ 0 (USD per million tokens)`);
    }
    return {
      model: e.model,
      provider: e.provider,
      source: e.source,
      input: e.input!,
      cacheRead: e.cacheRead!,
      cacheWrite: e.cacheWrite!,
      output: e.output!,
    };
  });
}

/** The price a call is costed at, and where it comes from. */
export interface ResolvedPrice extends Prices {
  /** The table row's family, or `override:<pattern>`. */
  family: string;
  source: string;
  asOf: string | null;
}

/**
 * The prices in force for a model: the first matching operator override, else the first table row
 * for the provider whose pattern matches the normalised id; undefined when neither (cost unknown).
 */
export function findPrice(
  ref: Pick<ModelRef, 'provider' | 'model'>,
  overrides: readonly PriceOverride[] = [],
): ResolvedPrice | undefined {
  const id = normalizeModelId(ref.model);
  for (const o of overrides) {
    if ((o.provider === undefined || o.provider === ref.provider) && new RegExp(o.model).test(id)) {
      return {
        family: `override:${o.model}`,
        source: o.source ?? 'operator override',
        asOf: null,
        input: o.input,
        cacheRead: o.cacheRead,
        cacheWrite: o.cacheWrite,
        output: o.output,
      };
    }
  }
  const row = PRICE_TABLE.find((p) => p.providers.includes(ref.provider) && p.patterns.some((re) => re.test(id)));
  if (!row) return undefined;
  return {
    family: row.family,
    source: row.source,
    asOf: row.asOf,
    input: row.input,
    cacheRead: row.cacheRead,
    cacheWrite: row.cacheWrite,
    output: row.output,
  };
}
