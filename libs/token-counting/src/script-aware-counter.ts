import { addScriptFeatures, FEATURE_COUNT, FEATURE_NAMES } from './script-features';
import { SCRIPT_V1_FLOOR_RATES, SCRIPT_V1_RATES, ScriptRates } from './script-rates';
import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

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
 * `ceil(Σ rate × feature)` tokens. The rates ({@link SCRIPT_V1_RATES}, derived by
 * bench/counting/derive-rates.ts) keep the estimate at or above 0.93 × the largest count of 11 reference
 * tokenizers (o200k_base, cl100k_base, Llama 3, Qwen 3, Gemma 3, DeepSeek V3, GPT-OSS, Claude, Gemini,
 * Mistral SentencePiece and Tekken) on every corpus message, so that with the 15% safety margin of an
 * approximate counter no packed request exceeds the context window under any of them. The price is
 * over-counting, least on English prose and most on scripts whose tokenizers differ most (Thai, Indic,
 * Armenian, Georgian): the ratios per script and tokenizer are in bench/RESULTS.md, "Token counting". `exact` is false; the counter never throws.
 */
export class ScriptAwareCounter implements TokenCounter {
  readonly id: string;
  readonly exact = false;
  readonly perMessageTokens: number;
  readonly perRequestTokens: number;
  private readonly rates: Float64Array;
  private readonly scratch = new Float64Array(FEATURE_COUNT);

  /**
   * @param rates tokens per feature unit; defaults to {@link SCRIPT_V1_RATES}.
   * @param id counter id stored beside cached counts; change it whenever the rates change.
   * @param framing tokens per message and per request; defaults to the largest measured (8 and 8).
   * @throws Error when a rate is missing or negative.
   */
  constructor(
    rates: ScriptRates = SCRIPT_V1_RATES,
    id = 'approx:script-v1',
    framing: { perMessageTokens: number; perRequestTokens: number } = {
      perMessageTokens: APPROX_PER_MESSAGE_TOKENS,
      perRequestTokens: APPROX_PER_REQUEST_TOKENS,
    },
  ) {
    this.id = id;
    this.perMessageTokens = framing.perMessageTokens;
    this.perRequestTokens = framing.perRequestTokens;
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

let floor: ScriptAwareCounter | undefined;

/**
 * The calibration base `approx:script-v1-floor`: the same features with {@link SCRIPT_V1_FLOOR_RATES},
 * which sit at or under every reference tokenizer, and OpenAI's
 * framing (4 per message, 3 per request), the middle of the measured range (2–8), so that a factor learned
 * from whole requests mostly reflects the text and not the wire format. Never plan with it
 * directly: the worker records `usageRecordOf(parts)` (floor estimate and script classes) against the
 * reported usage, learns per-class factors with `learnScriptCalibration`, and plans with
 * `ScriptCalibratedCounter` (script-calibration.ts).
 */
export function calibrationBaseCounter(): ScriptAwareCounter {
  floor ??= new ScriptAwareCounter(SCRIPT_V1_FLOOR_RATES, 'approx:script-v1-floor', {
    perMessageTokens: 4,
    perRequestTokens: 3,
  });
  return floor;
}
