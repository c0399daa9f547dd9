import type { CatalogEntry } from './catalog-entry';
import { MODEL_CATALOG, OLLAMA_UNKNOWN_MODEL_WINDOW, unknownModelWindow } from './catalog';
import type { ModelRef, ProviderId, TokenizerFamily } from './types';

/** Project settings that change the window a model is planned against. Both are tokens. */
export interface WindowOverrides {
  /** Replaces the catalog window (e.g. an Ollama host started with a different context length). */
  contextWindow?: number;
  /** A lower cap for cost control (seed 001's `maxContextTokens`); never raises the window. */
  maxContextTokens?: number;
}

/** A model ref resolved against the catalog. All windows are tokens. */
export interface ResolvedModel {
  provider: ProviderId;
  /** The model id as the project named it (not normalised). */
  model: string;
  /** Catalog family id, or `unknown`. */
  family: string;
  displayName: string;
  tokenizer: TokenizerFamily;
  /** The catalog's window for the family, or the unknown-model default for the provider. */
  catalogWindow: number;
  /** The window to plan against: min(contextWindow ?? catalogWindow, maxContextTokens ?? ∞). */
  window: number;
  /** Where `catalogWindow` comes from. */
  source: string;
  /** True when a catalog row matched the model id. */
  matched: boolean;
}

const BEDROCK_REGION_PREFIX = /^(us|eu|apac|global|us-gov|jp|au|ca)\.(?=[a-z0-9-]+\.)/;

/**
 * Normalises a model id for pattern matching: trimmed, lowercase, everything up to the last `/` removed
 * (Bedrock ARNs, Vertex `publishers/…/models/…` paths, Ollama registry namespaces), and a Bedrock
 * cross-region inference prefix (`us.`, `eu.`, `apac.`, `global.`…) removed.
 */
export function normalizeModelId(model: string): string {
  const lower = model.trim().toLowerCase();
  const last = lower.slice(lower.lastIndexOf('/') + 1);
  return last.replace(BEDROCK_REGION_PREFIX, '');
}

/**
 * The first catalog row that serves `ref.provider` and whose pattern matches the normalised model id,
 * or undefined when none does. `baseUrl` does not change the match: a known model behind a gateway
 * keeps its published window.
 */
export function findCatalogEntry(ref: ModelRef): CatalogEntry | undefined {
  const id = normalizeModelId(ref.model);
  return MODEL_CATALOG.find(
    (entry) => entry.providers.includes(ref.provider) && entry.patterns.some((pattern) => pattern.test(id)),
  );
}

function checkOverride(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw new RangeError(`${name} must be a positive whole number of tokens, got ${value}`);
  }
}

/**
 * Resolves a model ref to its catalog family and the window to plan against (tokens).
 *
 * Unknown models get 32000 tokens, or 128000 on the Ollama provider (seed 000). `overrides.contextWindow`
 * replaces the catalog window; `overrides.maxContextTokens` caps the result (seed 001).
 *
 * @throws RangeError when an override is not a positive whole number.
 */
export function resolveModel(ref: ModelRef, overrides: WindowOverrides = {}): ResolvedModel {
  checkOverride('contextWindow', overrides.contextWindow);
  checkOverride('maxContextTokens', overrides.maxContextTokens);
  const entry = findCatalogEntry(ref);
  const catalogWindow = entry?.maxInputTokens ?? unknownModelWindow(ref.provider);
  const window = Math.min(overrides.contextWindow ?? catalogWindow, overrides.maxContextTokens ?? Infinity);
  if (entry) {
    return {
      provider: ref.provider,
      model: ref.model,
      family: entry.family,
      displayName: entry.displayName,
      tokenizer: entry.tokenizer,
      catalogWindow,
      window,
      source: entry.source,
      matched: true,
    };
  }
  return {
    provider: ref.provider,
    model: ref.model,
    family: 'unknown',
    displayName: `Unknown model (${ref.model})`,
    tokenizer: 'unknown',
    catalogWindow,
    window,
    source:
      catalogWindow === OLLAMA_UNKNOWN_MODEL_WINDOW
        ? 'seed 000: the Ollama provider default for unknown models'
        : 'seed 000: global default for unknown models (deliberately conservative)',
    matched: false,
  };
}
