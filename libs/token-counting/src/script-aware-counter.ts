import { addScriptFeatures, FEATURE_COUNT, FEATURE_NAMES, FeatureName } from './script-features';
import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

/** Tokens per unit of each feature (see {@link Feature} for the units). */
export type ScriptRates = Readonly<Record<FeatureName, number>>;

/**
 * Rates of `approx:script-v1`, tokens per unit of each feature.
 *
 * PROVISIONAL: hand-set conservative figures, to be replaced by the output of
 * bench/counting/derive-rates.ts (measured against every reference tokenizer).
 */
export const SCRIPT_V1_RATES: ScriptRates = {
  asciiLetter: 0.2,
  capsRun: 0.3,
  latinExtLetter: 0.6,
  latinWord: 0.5,
  cyrillicLetter: 0.5,
  cyrillicWord: 0.5,
  greekLetter: 0.7,
  greekWord: 0.5,
  arabicLetter: 0.7,
  arabicWord: 0.5,
  hebrewLetter: 0.8,
  hebrewWord: 0.5,
  devanagariLetter: 1.2,
  devanagariWord: 0.5,
  indicLetter: 2,
  indicWord: 0.5,
  thaiLetter: 2,
  seAsianLetter: 3,
  otherLetter: 3,
  han: 2,
  kana: 1.5,
  hangul: 2,
  digit: 1,
  longDigit: 1,
  digitRun: 0.5,
  space: 0.05,
  extraSpace: 0.5,
  newline: 1,
  asciiPunct: 0.8,
  otherPunct: 2,
  emojiBytes: 1.2,
  symbolBytes: 1.2,
  urlChar: 0.6,
  base64Char: 1,
};

/**
 * Framing of the approximate counter, in tokens: the largest of the chat templates measured
 * (GPT-OSS Harmony spends 7 per assistant message; Llama 3, Qwen, Gemma 5; OpenAI 3; Mistral 2), and
 * a request overhead covering BOS plus the longest reply priming (Qwen 3 with an empty think block: 7).
 */
export const APPROX_PER_MESSAGE_TOKENS = 8;
/** See {@link APPROX_PER_MESSAGE_TOKENS}. */
export const APPROX_PER_REQUEST_TOKENS = 8;

/**
 * `approx:script-v1`: an estimate for tokenizers we cannot run, that is meant never to be low.
 *
 * The text is split into per-script features in one pass ({@link addScriptFeatures}); the estimate is
 * `ceil(Σ rate × feature)` tokens. The rates are upper rates over every reference tokenizer (o200k_base,
 * cl100k_base, Llama 3, Qwen 3, Gemma 3, DeepSeek V3, Claude, Gemini, Mistral), so that with the 15%
 * safety margin of an approximate counter no packed request exceeds the context window under any of
 * them. `exact` is false; the counter never throws.
 */
export class ScriptAwareCounter implements TokenCounter {
  readonly id: string;
  readonly exact = false;
  readonly perMessageTokens = APPROX_PER_MESSAGE_TOKENS;
  readonly perRequestTokens = APPROX_PER_REQUEST_TOKENS;
  private readonly rates: Float64Array;
  private readonly scratch = new Float64Array(FEATURE_COUNT);

  /**
   * @param rates tokens per feature unit; defaults to {@link SCRIPT_V1_RATES}.
   * @param id counter id stored beside cached counts; change it whenever the rates change.
   */
  constructor(rates: ScriptRates = SCRIPT_V1_RATES, id = 'approx:script-v1') {
    this.id = id;
    this.rates = new Float64Array(FEATURE_COUNT);
    FEATURE_NAMES.forEach((name, i) => {
      const rate = rates[name];
      if (!(rate >= 0)) throw new Error(`ScriptAwareCounter: rate for ${name} must be a number ≥ 0`);
      this.rates[i] = rate;
    });
  }

  /** Estimated tokens of `text` (no framing); 0 for the empty string. */
  countText(text: string): number {
    if (text.length === 0) return 0;
    const f = this.scratch;
    f.fill(0);
    addScriptFeatures(text, f);
    let total = 0;
    for (let i = 0; i < FEATURE_COUNT; i++) total += f[i] * this.rates[i];
    return Math.ceil(total);
  }

  /** Estimated tokens of a request: Σ (countText + {@link perMessageTokens}) + {@link perRequestTokens}. */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }
}

