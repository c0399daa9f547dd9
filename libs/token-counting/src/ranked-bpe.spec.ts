import { get_encoding, type Tiktoken as WasmTiktoken } from 'tiktoken';
import { PIECE_MEMO_LIMIT, PIECE_MEMO_MAX_LENGTH, RankedBpe } from './ranked-bpe';
import { tiktokenBpe } from './tiktoken-counter';
import { corpusMessages, pathologicalMessages } from './testing/corpus';
import { hostileRuns } from './testing/hostile';

/**
 * Our engine is checked against two implementations that share neither its code nor its rank data:
 * gpt-tokenizer 4.0.0 (pure JavaScript, its own bundled ranks) and tiktoken 1.0.22 (OpenAI's Rust core
 * compiled to WASM, its own bundled ranks). js-tiktoken, whose rank tables we load, is not the reference.
 */
interface GptTokenizer {
  encode(text: string, options: { allowedSpecial: Set<string>; disallowedSpecial: Set<string> }): number[];
}
// Required: the package's types resolve only under node16 module resolution, not this repo's.
const gptO200k = (text: string, o: Parameters<GptTokenizer['encode']>[1]) =>
  (require('gpt-tokenizer/encoding/o200k_base') as GptTokenizer).encode(text, o);
const gptCl100k = (text: string, o: Parameters<GptTokenizer['encode']>[1]) =>
  (require('gpt-tokenizer/encoding/cl100k_base') as GptTokenizer).encode(text, o);
const noSpecial = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
const references: Record<'o200k_base' | 'cl100k_base', { gpt: (text: string) => number; wasm: () => WasmTiktoken }> = {
  o200k_base: { gpt: (text) => gptO200k(text, noSpecial).length, wasm: () => get_encoding('o200k_base') },
  cl100k_base: { gpt: (text) => gptCl100k(text, noSpecial).length, wasm: () => get_encoding('cl100k_base') },
};

describe(RankedBpe.name, () => {
  const corpus = [...corpusMessages({ pgChars: 300_000 }), ...pathologicalMessages(120)];

  describe.each(['o200k_base', 'cl100k_base'] as const)('%s', (encoding) => {
    const bpe = tiktokenBpe(encoding);
    const ref = references[encoding];
    let wasm: WasmTiktoken;
    beforeAll(() => {
      wasm = ref.wasm();
    });
    afterAll(() => wasm.free());

    it('counts every corpus message (English, code, JSON, Chinese, 26 UDHR languages, emoji, pathological) exactly as gpt-tokenizer and tiktoken WASM', () => {
      const mismatches: string[] = [];
      for (const m of corpus) {
        const ours = bpe.count(m.text);
        const gpt = ref.gpt(m.text);
        const rust = wasm.encode_ordinary(m.text).length;
        if (ours !== gpt || ours !== rust)
          mismatches.push(`${m.id} ours=${ours} gpt-tokenizer=${gpt} tiktoken=${rust}`);
      }
      expect(corpus.length).toBeGreaterThan(5_000);
      expect(mismatches).toEqual([]);
    });

    it('counts hostile runs in every script exactly as both references', () => {
      const mismatches: string[] = [];
      for (const [name, text] of hostileRuns(1_500)) {
        const ours = bpe.count(text);
        const gpt = ref.gpt(text);
        const rust = wasm.encode_ordinary(text).length;
        if (ours !== gpt || ours !== rust)
          mismatches.push(`${name} ours=${ours} gpt-tokenizer=${gpt} tiktoken=${rust}`);
      }
      expect(mismatches).toEqual([]);
    });
  });

  describe('piece memo', () => {
    // A table of its own, so the memo starts empty whatever ran before.
    const bpe = new RankedBpe(require('js-tiktoken/ranks/o200k_base'));
    const text = 'Indexes are created concurrently with CREATE INDEX CONCURRENTLY; autovacuum unfreezes them.';

    it('counts a text seen before from the memo: same count, no merge, every pre-token a hit', () => {
      const first = bpe.work();
      const cold = bpe.count(text);
      const warm = bpe.work();
      expect(bpe.count(text)).toBe(cold);
      const after = bpe.work();
      expect(cold).toBe(gptO200k(text, noSpecial).length);
      expect(warm.merges - first.merges).toBeGreaterThan(0);
      expect(after.merges - warm.merges).toBe(0);
      expect(after.memoHits - warm.memoHits).toBe(after.pretokens - warm.pretokens);
      expect(after.bytes - warm.bytes).toBe(warm.bytes - first.bytes);
    });

    it(`holds at most ${PIECE_MEMO_LIMIT} pre-tokens of at most ${PIECE_MEMO_MAX_LENGTH} code units`, () => {
      // Distinct lower-case words (` xq`, ` xr`, …: letters only, so each is one pre-token).
      const letters = (n: number): string =>
        (n < 26 ? '' : letters(Math.floor(n / 26) - 1)) + String.fromCharCode(97 + (n % 26));
      const words = Array.from({ length: PIECE_MEMO_LIMIT + 5_000 }, (_, i) => ` x${letters(i)}`);
      const long = ` ${'abcdefghij'.repeat(7)}`;
      let counted = 0;
      for (let i = 0; i < words.length; i += 1_000) counted += bpe.count(words.slice(i, i + 1_000).join(''));
      expect(counted).toBe(gptO200k(words.join(''), noSpecial).length);
      expect(bpe.pieceMemoSize()).toBeLessThanOrEqual(PIECE_MEMO_LIMIT);
      // Cleared once when full, then refilled by the words after it.
      expect(bpe.pieceMemoSize()).toBeGreaterThan(1_000);
      const before = bpe.pieceMemoSize();
      expect(bpe.count(long)).toBe(gptO200k(long, noSpecial).length);
      expect(bpe.pieceMemoSize()).toBe(before);
    });
  });

  describe('work', () => {
    const o200k = tiktokenBpe('o200k_base');
    const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

    // The inputs of issue 10 and the worst found: at most n − 1 merges and 3n rank look-ups per n bytes.
    it.each([
      ['3,000 × 🧪 (issue 10: froze the gateway 19 s)', 9_000, '🧪'.repeat(3_000)],
      ['8,000 × "a" (froze the gateway 9 s, the synthesis worker 27 s)', 1_000, 'a'.repeat(8_000)],
      ['8,000 × 规 (a system prompt that froze the synthesis worker ~98 s)', 8_000, '规'.repeat(8_000)],
      [
        '"a" × 6,000 + " " + "b" × 6,000 (a 12 KB knowledge document, 13 s)',
        2_251,
        `${'a'.repeat(6_000)} ${'b'.repeat(6_000)}`,
      ],
      ['100,000 × ก (Thai, one run)', 100_000, 'ก'.repeat(100_000)],
      ['200,000 × "a" (one run of a 1 MB document, a fifth of it)', 25_000, 'a'.repeat(200_000)],
    ])(
      '%s: %i tokens (as gpt-tokenizer up to 12,001 characters), merges < bytes, rank look-ups ≤ 3 × bytes + pre-tokens',
      (_name, tokens, text) => {
        const before = o200k.work();
        expect(o200k.count(text)).toBe(tokens);
        // The references are quadratic in a pre-token too: asked only where that is affordable.
        if (text.length <= 12_001) expect(gptO200k(text, noSpecial).length).toBe(tokens);
        const after = o200k.work();
        const done = {
          texts: after.texts - before.texts,
          pretokens: after.pretokens - before.pretokens,
          bytes: after.bytes - before.bytes,
          merges: after.merges - before.merges,
          rankLookups: after.rankLookups - before.rankLookups,
        };
        expect(done.texts).toBe(1);
        expect(done.bytes).toBe(bytes(text));
        expect(done.merges).toBeLessThanOrEqual(done.bytes - done.pretokens);
        expect(done.rankLookups).toBeLessThanOrEqual(done.pretokens + 3 * done.bytes);
      },
    );
  });
});
