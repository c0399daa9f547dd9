import type { ProviderId, TokenizerFamily } from './types';

/**
 * One row of the model catalog: a model family on the providers that serve it with one context window.
 *
 * `maxInputTokens` is the upstream-published context window in tokens (the seed's MaxInputTokens).
 * A family served with different windows by different providers (Llama 3.x on Bedrock and on Ollama,
 * for instance) is two rows, each with its own `family` id.
 */
export interface CatalogEntry {
  /** Stable id of the family row, unique in the catalog, e.g. `claude-4`, `ollama-llama-3.x`. */
  readonly family: string;
  /** Human-readable family name, e.g. `Claude 4.x (Opus / Sonnet / Haiku)`. */
  readonly displayName: string;
  /** Providers that serve this family with this window. */
  readonly providers: readonly ProviderId[];
  /** Context window in tokens, as the provider publishes it. */
  readonly maxInputTokens: number;
  /** Tokenizer the family uses; `unknown` sends the token-counting rule to the approximate counter. */
  readonly tokenizer: TokenizerFamily;
  /** Where the window comes from: the seed table row and the provider documentation. */
  readonly source: string;
  /** The seed 000 MaxInputTokens row this entry implements, or null for a row added beyond the seed. */
  readonly seedRow: string | null;
  /**
   * Patterns tested, in catalog order, against the normalised model id (see `normalizeModelId`).
   * The first entry whose provider list holds the ref's provider and whose pattern matches wins.
   */
  readonly patterns: readonly RegExp[];
}
