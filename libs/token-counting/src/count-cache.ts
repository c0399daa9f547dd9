import { type ChatMessage, countFramedMessages, type TokenCounter } from './token-counter';

/** Bounds of a {@link CountCache}. */
export interface CountCacheLimits {
  /** Most texts kept (default 4,096). */
  maxEntries?: number;
  /** Most UTF-16 code units kept over every text (default 4,000,000, about 8 MB of strings). */
  maxCodeUnits?: number;
  /** Longest text kept, in UTF-16 code units (default 16,384); a longer text is counted every time. */
  maxTextLength?: number;
}

/** Hits and misses of a {@link CountCache} since it was built, and what it holds now. */
export interface CountCacheStats {
  hits: number;
  misses: number;
  /** Texts evicted (least recently used first) to stay within the limits. */
  evictions: number;
  /** Texts held now. */
  entries: number;
  /** UTF-16 code units of the texts held now. */
  codeUnits: number;
}

/**
 * A token counter that remembers the counts of the texts it was asked about, across requests: a
 * bounded LRU keyed by the text itself (compared by content, so a hit is exact and never a hash
 * collision), in front of `counter`. Same id, exactness and framing as `counter`; `countMessages`
 * counts each message's text through the cache.
 *
 * What it saves in the synthesis worker: the texts counted again on later asks (the system prompt,
 * the earlier turns the local stand-in recounts for its usage report, item headers, `\n\n`).
 *
 * Only for counters whose count is a function of their id and the text (exact tokenizers:
 * `tiktoken:*`, `hf:*`); never for the per-script calibrated estimate, whose counts move with its
 * learned factors under the same id. {@link sharedCountCache} holds one per counter id per process.
 */
export class CountCache implements TokenCounter {
  readonly id: string;
  readonly exact: boolean;
  readonly perMessageTokens: number;
  readonly perRequestTokens: number;
  private readonly counts = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly maxCodeUnits: number;
  private readonly maxTextLength: number;
  private readonly stat = { hits: 0, misses: 0, evictions: 0, codeUnits: 0 };

  constructor(
    private readonly counter: TokenCounter,
    limits: CountCacheLimits = {},
  ) {
    this.id = counter.id;
    this.exact = counter.exact;
    this.perMessageTokens = counter.perMessageTokens;
    this.perRequestTokens = counter.perRequestTokens;
    this.maxEntries = limits.maxEntries ?? 4_096;
    this.maxCodeUnits = limits.maxCodeUnits ?? 4_000_000;
    this.maxTextLength = limits.maxTextLength ?? 16_384;
  }

  /**
   * Tokens of `text`: the cached count (the text becomes the most recently used), else
   * `counter.countText(text)`, kept when the text is at most `maxTextLength` long; the least recently
   * used texts are evicted past `maxEntries` texts or `maxCodeUnits` code units.
   */
  countText(text: string): number {
    if (text.length > this.maxTextLength) return this.counter.countText(text);
    const cached = this.counts.get(text);
    if (cached !== undefined) {
      this.stat.hits++;
      // A Map iterates in insertion order: re-inserting makes the text the most recent.
      this.counts.delete(text);
      this.counts.set(text, cached);
      return cached;
    }
    this.stat.misses++;
    const tokens = this.counter.countText(text);
    this.counts.set(text, tokens);
    this.stat.codeUnits += text.length;
    while (this.counts.size > this.maxEntries || this.stat.codeUnits > this.maxCodeUnits) {
      const oldest = this.counts.keys().next().value as string;
      this.counts.delete(oldest);
      this.stat.codeUnits -= oldest.length;
      this.stat.evictions++;
    }
    return tokens;
  }

  /** Tokens of a whole request: Σ (countText(content) + perMessageTokens) + perRequestTokens. */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }

  /** A copy of the hit and miss counters and the current size. */
  stats(): CountCacheStats {
    const { hits, misses, evictions, codeUnits } = this.stat;
    return { hits, misses, evictions, entries: this.counts.size, codeUnits };
  }
}

const shared = new Map<string, CountCache>();

/**
 * The process-wide {@link CountCache} of `counter`'s id (default limits), built on first use; `counter`
 * itself when it is not exact (the calibrated estimate's counts change under one id: never cached).
 */
export function sharedCountCache(counter: TokenCounter): TokenCounter {
  if (!counter.exact) return counter;
  let cache = shared.get(counter.id);
  if (!cache) {
    cache = new CountCache(counter);
    shared.set(counter.id, cache);
  }
  return cache;
}
