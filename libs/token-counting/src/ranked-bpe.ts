/**
 * Our own byte-level BPE counter for tiktoken-format rank tables (OpenAI `o200k_base` and
 * `cl100k_base`, Mistral Tekken), with a cost per character bounded by the table, never by the text.
 *
 * Why not js-tiktoken's engine: its merge loop rescans every part of a pre-token after each merge, so
 * one pre-token (a run without spaces: letters, CJK, emoji) costs O(n²) rank look-ups, so its time grows with
 * the square of the run's length (ours on such runs: bench/RESULTS.md, "Hostile inputs"; throughput
 * cold and warm against js-tiktoken and tiktoken: "Counting throughput, cold and warm"). Here the merges come from a binary heap keyed by (rank, position),
 * which picks exactly the pair tiktoken's loop picks (lowest rank, leftmost on ties), so counts are
 * identical while the work is O(n log n) per pre-token: at most n − 1 merges and 3n rank look-ups for
 * n bytes (see {@link BpeWork}).
 *
 * Semantics copied from tiktoken (`_byte_pair_merge` in the Rust crate, `bytePairMerge` in js-tiktoken
 * 1.0.21): the text is split by the table's `pat_str` (a Unicode regex), each piece is UTF-8 encoded
 * (a lone surrogate becomes U+FFFD, as TextEncoder does), a piece that is itself a token counts 1,
 * otherwise adjacent parts merge, lowest rank of their concatenation first, until no concatenation is a
 * token. Special-token strings are plain text (as the OpenAI API treats message content).
 */

/** The rank table format of js-tiktoken (`js-tiktoken/ranks/*`) and Mistral's Tekken JSON. */
export interface TiktokenRankTable {
  /** Pre-tokenizer regex source (compiled with the `u` flag). */
  pat_str: string;
  /** Lines `"! <offset> <base64 token> <base64 token> …"`: consecutive ranks from `offset`. */
  bpe_ranks: string;
}

/** Work done by a {@link RankedBpe} since it was built (cumulative; read a delta around a call). */
export interface BpeWork {
  /** Texts counted (empty texts are not counted). */
  texts: number;
  /** UTF-16 code units of those texts. */
  codeUnits: number;
  /** Pre-tokens the regex produced. */
  pretokens: number;
  /** UTF-8 bytes of those pre-tokens. */
  bytes: number;
  /** Merges performed: at most `bytes − pretokens`. */
  merges: number;
  /** Rank-table look-ups: at most `pretokens + 3 × bytes` (whole piece, initial pairs, 2 per merge). */
  rankLookups: number;
  /** Pre-tokens counted from the piece memo (no merge, no pair look-up; see {@link RankedBpe.count}). */
  memoHits: number;
}

/** 2^32: heap keys are `rank × 2^32 + position`; ranks < 2^21 and positions < 2^32 stay exact in a double. */
const POSITION_SPAN = 4_294_967_296;
/** 2^21: pair memo keys are `rankA × 2^21 + rankB` (ranks < 2^21, so keys stay exact). */
const PAIR_KEY_SPAN = 2_097_152;
/** Entries of the pair memo before it is cleared: bounds its memory (~100 MB worst case) whatever the texts. */
const PAIR_MEMO_LIMIT = 1_000_000;
/**
 * Entries of the piece memo before it is cleared: at most 65,536 pieces of at most
 * {@link PIECE_MEMO_MAX_LENGTH} code units each (≲ 10 MB), whatever the texts.
 */
export const PIECE_MEMO_LIMIT = 65_536;
/** Longest pre-token (UTF-16 code units) whose count the piece memo keeps: words repeat, long runs rarely do. */
export const PIECE_MEMO_MAX_LENGTH = 64;

/** Exact tiktoken-style BPE token counter over a rank table; see the file comment. */
export class RankedBpe {
  private readonly ranks = new Map<string, number>();
  /** Rank of each single byte (-1 when a byte is not a token). */
  private readonly byteRank = new Int32Array(256).fill(-1);
  /** Memo of the rank of two tokens joined, keyed `rankA × 2^21 + rankB`; cleared past {@link PAIR_MEMO_LIMIT}. */
  private readonly pairMemo = new Map<number, number>();
  /**
   * Memo of the token count of each pre-token seen (1 for a token, the merge loop's count for a word
   * of several tokens) with its UTF-8 length, packed `bytes × 256 + tokens`, keyed by the pre-token's text: the count depends on its bytes alone, so a
   * memoised count is the count the merge loop returns. A small map of the words in use, looked up
   * before the 200k-entry rank table. Cleared past {@link PIECE_MEMO_LIMIT} entries.
   */
  private readonly pieceMemo = new Map<string, number>();
  private readonly maxTokenBytes: number;
  private readonly pattern: RegExp;
  private readonly counters: BpeWork = {
    texts: 0,
    codeUnits: 0,
    pretokens: 0,
    bytes: 0,
    merges: 0,
    rankLookups: 0,
    memoHits: 0,
  };
  // Scratch buffers grown on demand and reused, so a count allocates nothing per merge.
  private next = new Int32Array(0);
  private prev = new Int32Array(0);
  private pairRank = new Int32Array(0);
  private partRank = new Int32Array(0);
  private heap = new Float64Array(0);

  /**
   * Parses `table` (o200k_base has 200k ranks: its load time and memory are in bench/RESULTS.md,
   * "Token counting", "Load time, memory").
   * @throws SyntaxError when `pat_str` is not a valid Unicode regex.
   */
  constructor(table: TiktokenRankTable) {
    let maxBytes = 1;
    for (const line of table.bpe_ranks.split('\n')) {
      if (!line) continue;
      const fields = line.split(' ');
      const offset = Number.parseInt(fields[1], 10);
      for (let i = 2; i < fields.length; i++) {
        const bytes = atob(fields[i]);
        if (bytes.length > maxBytes) maxBytes = bytes.length;
        this.ranks.set(bytes, offset + i - 2);
        if (bytes.length === 1) this.byteRank[bytes.charCodeAt(0)] = offset + i - 2;
      }
    }
    this.maxTokenBytes = maxBytes;
    this.pattern = new RegExp(table.pat_str, 'gu');
  }

  /** A copy of the cumulative work counters. */
  work(): BpeWork {
    return { ...this.counters };
  }

  /** Pre-tokens held by the piece memo now (at most {@link PIECE_MEMO_LIMIT}). */
  pieceMemoSize(): number {
    return this.pieceMemo.size;
  }

  /**
   * Tokens of `text` (no special tokens, no framing); 0 for the empty string. A pre-token that is a
   * token counts 1, otherwise its parts are merged; either count is memoised by the pre-token's text
   * (pieces up to {@link PIECE_MEMO_MAX_LENGTH} code units), so a word seen before costs one look-up
   * in a small map.
   */
  count(text: string): number {
    if (text.length === 0) return 0;
    const work = this.counters;
    work.texts++;
    work.codeUnits += text.length;
    let tokens = 0;
    const memo = this.pieceMemo;
    const pattern = this.pattern;
    pattern.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = pattern.exec(text)) !== null) {
      const piece = match[0];
      // An empty match (no table's pattern has one) is skipped as matchAll skips it: by one code point.
      if (piece.length === 0) {
        pattern.lastIndex += (text.codePointAt(pattern.lastIndex) ?? 0) > 0xffff ? 2 : 1;
        continue;
      }
      work.pretokens++;
      const memoised = piece.length <= PIECE_MEMO_MAX_LENGTH ? memo.get(piece) : undefined;
      if (memoised !== undefined) {
        // Packed `bytes × 256 + tokens` (a memoised piece has at most 4 × 64 bytes, so tokens < 256).
        work.memoHits++;
        work.bytes += memoised >>> 8;
        tokens += memoised & 0xff;
        continue;
      }
      const bytes = isAscii(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1');
      work.bytes += bytes.length;
      work.rankLookups++;
      const parts = bytes.length === 1 || this.ranks.has(bytes) ? 1 : this.mergeCount(bytes);
      if (piece.length <= PIECE_MEMO_MAX_LENGTH) {
        if (memo.size >= PIECE_MEMO_LIMIT) memo.clear();
        memo.set(piece, bytes.length * 256 + parts);
      }
      tokens += parts;
    }
    return tokens;
  }

  /**
   * Rank of the token `bytes[start, end)` = the part of rank `left` followed by the part of rank
   * `right`, or -1 when the concatenation is not a token. Memoised per (left, right): a rank names its
   * bytes, so the pair decides the concatenation.
   */
  private joinedRank(bytes: string, start: number, end: number, left: number, right: number): number {
    if (end - start > this.maxTokenBytes || left < 0 || right < 0) return -1;
    this.counters.rankLookups++;
    const key = left * PAIR_KEY_SPAN + right;
    let rank = this.pairMemo.get(key);
    if (rank === undefined) {
      rank = this.ranks.get(bytes.slice(start, end)) ?? -1;
      if (this.pairMemo.size >= PAIR_MEMO_LIMIT) this.pairMemo.clear();
      this.pairMemo.set(key, rank);
    }
    return rank;
  }

  /** Parts left after merging `bytes` (n ≥ 2) the way tiktoken does; O(n log n). */
  private mergeCount(bytes: string): number {
    const n = bytes.length;
    this.ensureCapacity(n);
    const { next, prev, pairRank, partRank, heap } = this;
    let heapSize = 0;
    const push = (key: number) => {
      let i = heapSize++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent] <= key) break;
        heap[i] = heap[parent];
        i = parent;
      }
      heap[i] = key;
    };
    const pop = (): number => {
      const top = heap[0];
      const last = heap[--heapSize];
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heapSize) break;
        const right = left + 1;
        const child = right < heapSize && heap[right] < heap[left] ? right : left;
        if (heap[child] >= last) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
      return top;
    };
    // Part i spans [i, next[i]); pairRank[i] is the rank of part i joined with the part after it.
    // partRank[i] is the rank of part i itself.
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      partRank[i] = this.byteRank[bytes.charCodeAt(i)];
    }
    for (let i = 0; i < n - 1; i++) {
      const rank = this.joinedRank(bytes, i, i + 2, partRank[i], partRank[i + 1]);
      pairRank[i] = rank;
      if (rank >= 0) push(rank * POSITION_SPAN + i);
    }
    pairRank[n - 1] = -1;
    let parts = n;
    let merges = 0;
    while (heapSize > 0) {
      const key = pop();
      const rank = Math.floor(key / POSITION_SPAN);
      const i = key - rank * POSITION_SPAN;
      // Stale entries: the part was merged away (pairRank reset to -2) or its pair has grown since.
      if (pairRank[i] !== rank) continue;
      const j = next[i];
      const k = next[j];
      pairRank[j] = -2;
      partRank[i] = rank;
      next[i] = k;
      if (k < n) prev[k] = i;
      parts--;
      merges++;
      if (k < n) {
        const r = this.joinedRank(bytes, i, next[k], rank, partRank[k]);
        pairRank[i] = r;
        if (r >= 0) push(r * POSITION_SPAN + i);
      } else pairRank[i] = -1;
      const p = prev[i];
      if (p >= 0) {
        const r = this.joinedRank(bytes, p, k, partRank[p], rank);
        pairRank[p] = r;
        if (r >= 0) push(r * POSITION_SPAN + p);
      }
    }
    this.counters.merges += merges;
    return parts;
  }

  private ensureCapacity(n: number): void {
    if (this.next.length >= n) return;
    const size = Math.max(n, 2 * this.next.length, 1024);
    this.next = new Int32Array(size);
    this.prev = new Int32Array(size);
    this.pairRank = new Int32Array(size);
    this.partRank = new Int32Array(size);
    // Initial pairs plus up to two pushes per merge.
    this.heap = new Float64Array(3 * size);
  }
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
