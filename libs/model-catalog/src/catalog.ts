import type { CatalogEntry } from './catalog-entry';
import { HOSTED_CATALOG } from './catalog.hosted';
import { OLLAMA_CATALOG } from './catalog.ollama';
import type { ProviderId } from './types';

/**
 * Window in tokens for a model the catalog does not know. Source: seed 000, "Unknown models fall back
 * to a global default of 32000 tokens (deliberately conservative — over-trimming is recoverable,
 * under-trimming and 4xx is not)".
 */
export const UNKNOWN_MODEL_WINDOW = 32000;

/**
 * Window in tokens for an unknown model on the Ollama provider. Source: seed 000, "The Ollama provider
 * overrides this with a 128000 default, matching the de-facto context window of current local models".
 */
export const OLLAMA_UNKNOWN_MODEL_WINDOW = 128000;

/**
 * The embedded stand-in provider (`local`, no upstream model): every model id resolves here.
 * 8192 tokens is the window the service gives its stand-in (the project's choice, not a seed figure).
 */
export const LOCAL_CATALOG_ENTRY: CatalogEntry = {
  family: 'local',
  displayName: 'Embedded stand-in',
  providers: ['local'],
  maxInputTokens: 8192,
  tokenizer: 'unknown',
  source: 'Ask service design: the embedded stand-in provider answers within an 8192-token window',
  seedRow: null,
  patterns: [/^/],
};

/**
 * Every catalog row, in match order: hosted providers, Ollama, then the embedded stand-in.
 * Windows are tokens; see each entry's `source`.
 */
export const MODEL_CATALOG: readonly CatalogEntry[] = [...HOSTED_CATALOG, ...OLLAMA_CATALOG, LOCAL_CATALOG_ENTRY];

/**
 * The window in tokens for a model of `provider` that no catalog row matches: 128000 for Ollama,
 * 32000 otherwise (seed 000, see the two constants).
 */
export function unknownModelWindow(provider: ProviderId): number {
  return provider === 'ollama' ? OLLAMA_UNKNOWN_MODEL_WINDOW : UNKNOWN_MODEL_WINDOW;
}
