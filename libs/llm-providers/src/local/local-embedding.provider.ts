import type { EmbeddingProvider, EmbeddingProviderId, EmbeddingUsage } from '../types';

/** Options of {@link LocalEmbeddingProvider}. */
export interface LocalEmbeddingOptions {
  /** Vector length; default 256 (one of the persistence layer's HNSW-indexed lengths). */
  dimensions?: number;
}

/** Feature families (index into FAMILY_WEIGHT). */
const FAMILY = { word: 0, bigram: 1, charGram: 2, unspacedGram: 3 } as const;
/**
 * Weight of each family before normalization. Character grams are many per word (≈3 per character),
 * so each weighs little or they would drown the words in collision noise at 256 dimensions. Picked
 * from a small sweep: finding the chunk that contains a sentence of the pgvector README among 1,367
 * chunks (kb-pgvector + 300 pages of the PostgreSQL manual), top-1 rose from 0.66 with
 * [1, 0.7, 0.35] to 0.78 with these weights (86 sentences of 8–30 words).
 */
const FAMILY_WEIGHT = [1.0, 1.0, 0.2, 0.8] as const;
/** Character n-gram lengths taken inside each word (padded with a boundary mark). */
const CHAR_GRAM_MIN = 3;
const CHAR_GRAM_MAX = 5;
/** Seeds that keep the families' hashes apart. */
const SEED = { word: 0x9e3779b1, bigram: 0x85ebca77, charGram: 0xc2b2ae3d, unspacedGram: 0x27d4eb2f } as const;

/** Tokens: runs of letters, marks and digits (any script), or one symbol such as an emoji. */
const TOKEN = /[\p{L}\p{M}\p{N}]+|\p{S}/gu;
/** Scripts written without spaces between words; their text is also cut into 1–2 character grams. */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/**
 * The embedded `local` embedding provider: deterministic, in-process, no model and no network.
 *
 * It is LEXICAL, not semantic: texts are close when they share words, word pairs or character
 * n-grams, not when they mean the same thing in other words. Features of the NFKC-lowercased text:
 * word unigrams, word bigrams, character 3–5-grams of each word (with a boundary mark, so
 * morphology such as "index"/"indexes" overlaps), and for scripts without spaces (Han, Kana, Thai…)
 * character unigrams and bigrams. Each feature is hashed (32-bit FNV-1a, then a murmur3 finaliser)
 * to one of `dimensions` buckets with a sign from another hash bit (signed hashing, so collisions
 * cancel on average instead of piling up), weighted by 1 + ln(tf) (sublinear term frequency) and
 * its family weight; the vector is L2-normalized. An empty text gets the vector of a fixed
 * `<empty>` feature, so every vector has norm 1.
 */
export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly provider: EmbeddingProviderId = 'local';
  readonly model = 'local-lexical-v1';
  readonly dimensions: number;
  /** No upstream limit; 64 keeps one call's work to a few milliseconds. */
  readonly maxBatchSize = 64;
  /** Scratch feature counts, reused by every call (embedding is synchronous, so never shared). */
  private readonly counts = new FeatureCounts();

  /** @throws RangeError unless `dimensions` is an integer in 8..16,000. */
  constructor(options: LocalEmbeddingOptions = {}) {
    const dimensions = options.dimensions ?? 256;
    if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 16_000) {
      throw new RangeError(`local embedding dimensions must be an integer in 8..16000, got ${dimensions}`);
    }
    this.dimensions = dimensions;
  }

  /**
   * One unit vector of `dimensions` numbers per text, in order. Synchronous work; the signal is
   * checked before each text.
   * @throws the signal's reason when aborted.
   */
  async embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    const out: number[][] = [];
    let tokens = 0;
    for (const text of texts) {
      signal?.throwIfAborted();
      out.push(this.embedOne(text));
      tokens += this.lastTokens;
    }
    // Its own count: the words and symbols it hashed (the `local` usage convention).
    onUsage?.({ inputTokens: tokens, raw: { promptTokens: tokens }, convention: 'local', model: this.model });
    return out;
  }

  /** Tokens (words, symbols) of the text {@link embedOne} embedded last. */
  private lastTokens = 0;

  /** The vector of one text (see the class comment). */
  embedOne(text: string): number[] {
    const counts = this.counts;
    counts.clear();
    const normalized = text.normalize('NFKC').toLowerCase();
    let previous = -1;
    let tokens = 0;
    for (const match of normalized.matchAll(TOKEN)) {
      tokens++;
      const w = match[0];
      const wordHash = hashString(w, SEED.word);
      counts.add(wordHash, FAMILY.word);
      // A bigram's hash combines its words' hashes (no string is built for it).
      if (previous !== -1) counts.add(fmix32(Math.imul(previous, 0x01000193) ^ wordHash ^ SEED.bigram), FAMILY.bigram);
      previous = wordHash;
      addCharGrams(w, counts);
      if (mayBeUnspaced(w) && UNSPACED.test(w)) addUnspacedGrams(w, counts);
    }
    this.lastTokens = tokens;
    if (counts.size === 0) counts.add(hashString('<empty>', SEED.word), FAMILY.word);

    const vector = new Float64Array(this.dimensions);
    counts.forEach((key, tf) => {
      const mixed = fmix32(key);
      // Bucket from the low bits (via the modulus), sign from the top bit: independent enough.
      const bucket = mixed % this.dimensions;
      const sign = mixed >>> 31 === 0 ? 1 : -1;
      vector[bucket] += sign * FAMILY_WEIGHT[key & 3] * (1 + Math.log(tf));
    });
    let norm = 0;
    for (const v of vector) norm += v * v;
    norm = Math.sqrt(norm);
    if (norm === 0) {
      // All features cancelled out (vanishingly rare): fall back to the first axis.
      const unit = new Array<number>(this.dimensions).fill(0);
      unit[0] = 1;
      return unit;
    }
    return Array.from(vector, (v) => v / norm);
  }
}

/**
 * Character CHAR_GRAM_MIN..CHAR_GRAM_MAX-grams (by UTF-16 code unit) of `word` between boundary
 * marks (U+0002 before, U+0003 after), hashed incrementally without building the padded string.
 */
function addCharGrams(word: string, counts: FeatureCounts): void {
  const n = word.length + 2;
  for (let start = 0; start < n; start++) {
    let h = SEED.charGram ^ 0x811c9dc5;
    for (let len = 1; len <= CHAR_GRAM_MAX && start + len <= n; len++) {
      const i = start + len - 1;
      h = Math.imul(h ^ (i === 0 ? 0x02 : i === n - 1 ? 0x03 : word.charCodeAt(i - 1)), 0x01000193);
      if (len >= CHAR_GRAM_MIN) counts.add((h ^ len) >>> 0, FAMILY.charGram);
    }
  }
}

/** Cheap pre-check before the Unicode-script regex: every unspaced script starts at U+0E00 (Thai) or later. */
function mayBeUnspaced(word: string): boolean {
  for (let i = 0; i < word.length; i++) if (word.charCodeAt(i) >= 0x0e00) return true;
  return false;
}

/** Character unigrams and bigrams (by code point) of the unspaced-script characters of `word`. */
function addUnspacedGrams(word: string, counts: FeatureCounts): void {
  const chars = Array.from(word);
  for (let i = 0; i < chars.length; i++) {
    if (!UNSPACED.test(chars[i])) continue;
    counts.add(hashString(chars[i], SEED.unspacedGram), FAMILY.unspacedGram);
    if (i + 1 < chars.length) counts.add(hashString(chars[i] + chars[i + 1], SEED.unspacedGram), FAMILY.unspacedGram);
  }
}

/** 32-bit FNV-1a of the UTF-16 code units of `s`, offset by `seed`. */
function hashString(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** murmur3's 32-bit finaliser: spreads every input bit over the output. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Counts of 32-bit feature keys: an open-addressing hash table on typed arrays (far cheaper than a
 * Map for the ~10,000 features of a 400-token chunk). A key is the feature hash with its low 2
 * bits replaced by the family index.
 */
class FeatureCounts {
  private keys = new Uint32Array(1 << 12);
  private tfs = new Uint32Array(1 << 12);
  private used: number[] = [];

  get size(): number {
    return this.used.length;
  }

  clear(): void {
    for (const slot of this.used) this.tfs[slot] = 0;
    this.used = [];
  }

  add(hash: number, family: number): void {
    if ((this.used.length + 1) * 2 > this.keys.length) this.grow();
    const key = ((hash & ~3) | family) >>> 0;
    const mask = this.keys.length - 1;
    let slot = (key ^ (key >>> 15)) & mask;
    while (this.tfs[slot] !== 0 && this.keys[slot] !== key) slot = (slot + 1) & mask;
    if (this.tfs[slot] === 0) {
      this.keys[slot] = key;
      this.used.push(slot);
    }
    this.tfs[slot]++;
  }

  forEach(visit: (key: number, tf: number) => void): void {
    for (const slot of this.used) visit(this.keys[slot], this.tfs[slot]);
  }

  private grow(): void {
    const entries = this.used.map((slot) => [this.keys[slot], this.tfs[slot]] as const);
    this.keys = new Uint32Array(this.keys.length * 2);
    this.tfs = new Uint32Array(this.tfs.length * 2);
    this.used = [];
    const mask = this.keys.length - 1;
    for (const [key, tf] of entries) {
      let slot = (key ^ (key >>> 15)) & mask;
      while (this.tfs[slot] !== 0) slot = (slot + 1) & mask;
      this.keys[slot] = key;
      this.tfs[slot] = tf;
      this.used.push(slot);
    }
  }
}

/**
 * Tokens of `text` by the lexical embedder's rule (runs of letters, marks and digits, and single
 * symbols, after NFKC and lower-casing): the count the embedded embedders report as their usage.
 */
export function countLexicalTokens(text: string): number {
  let tokens = 0;
  for (const _match of text.normalize('NFKC').toLowerCase().matchAll(TOKEN)) tokens++;
  return tokens;
}
