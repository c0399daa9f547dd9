import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

/**
 * An approximate counter scaled by a per-model correction factor learned from provider-reported usage.
 *
 * Counts are `⌈base count × factor⌉` per text; framing is the base's, scaled the same way. The factor is
 * never below 1 (a smaller one is raised to 1), so calibration can only add tokens to the base count.
 * The intended base is the calibration floor (`approx:script-v1-floor`, see {@link calibrationBaseCounter}),
 * which sits at or under every reference tokenizer; the learned factor lifts it to the model's own level.
 *
 * `id` is `<base id>×<factor>` so a calibrated figure is never mistaken for a base one; a planner that
 * caches counts should cache `base.countText(content)` under `base.id` and multiply at plan time with
 * {@link scale}, so a new factor does not invalidate the cache.
 */
export class CalibratedCounter implements TokenCounter {
  readonly id: string;
  readonly exact = false;
  readonly factor: number;
  readonly perMessageTokens: number;
  readonly perRequestTokens: number;

  /**
   * @param base the approximate counter to scale (an exact counter needs no calibration).
   * @param factor correction factor; values below 1 (and NaN) become 1.
   */
  constructor(
    readonly base: TokenCounter,
    factor: number,
  ) {
    this.factor = factor >= 1 ? factor : 1;
    this.id = `${base.id}×${this.factor.toFixed(3)}`;
    this.perMessageTokens = this.scale(base.perMessageTokens);
    this.perRequestTokens = this.scale(base.perRequestTokens);
  }

  /** ⌈tokens × factor⌉: applies the factor to a count the base produced (e.g. one read from a cache). */
  scale(baseTokens: number): number {
    return baseTokens === 0 ? 0 : Math.ceil(baseTokens * this.factor - 1e-9);
  }

  /** ⌈base.countText(text) × factor⌉ tokens. */
  countText(text: string): number {
    return this.scale(this.base.countText(text));
  }

  /** Σ (countText + perMessageTokens) + perRequestTokens, all scaled. */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }
}

/** `counter` scaled by `factor` (≥ 1); the same counter when the factor is 1 or below. */
export function calibrated(counter: TokenCounter, factor: number): TokenCounter {
  return factor > 1 ? new CalibratedCounter(counter, factor) : counter;
}

/** One call's figures: our count of the request we sent (with the base counter) and the provider's. */
export interface UsageRecord {
  /** Tokens of the sent request by the calibration base counter, framing included. */
  estimated: number;
  /** Prompt (input) tokens the provider reported for the same request. */
  reported: number;
}

/** Options of {@link learnCalibration}. */
export interface CalibrationOptions {
  /** Fewer usable records than this give factor 1 (no calibration). Default 20. */
  minSamples?: number;
  /** Quantile of reported ÷ estimated taken as the factor. Default 0.98 (the 2nd highest of 50). */
  quantile?: number;
  /**
   * Records whose reported ÷ estimated exceeds this many times the median are counting faults (a
   * different model behind the id, an attachment we did not count), left out and reported. Default 2.
   */
  faultRatio?: number;
}

/** Defaults of {@link CalibrationOptions}. */
export const CALIBRATION_DEFAULTS: Required<CalibrationOptions> = { minSamples: 20, quantile: 0.98, faultRatio: 2 };

/** What {@link learnCalibrationDetailed} learned. */
export interface CalibrationResult {
  /** The correction factor, ≥ 1. */
  factor: number;
  /** Records used. */
  samples: number;
  /** Records left out as counting faults (reported far above our estimate); log them with the model id. */
  faults: UsageRecord[];
}

/**
 * Learns a per-model correction factor from provider-reported prompt tokens: a high quantile of
 * reported ÷ estimated over the usable records, so later estimates sit at or above what the provider
 * bills for nearly every request, and never below 1. Records with a non-positive figure are ignored.
 * Returns factor 1 until `minSamples` usable records exist. Never throws.
 */
export function learnCalibrationDetailed(
  records: readonly UsageRecord[],
  options: CalibrationOptions = {},
): CalibrationResult {
  const { minSamples, quantile, faultRatio } = { ...CALIBRATION_DEFAULTS, ...options };
  const usable = records.filter((r) => r.estimated > 0 && r.reported > 0 && Number.isFinite(r.estimated + r.reported));
  if (usable.length === 0) return { factor: 1, samples: 0, faults: [] };
  const ratios = usable.map((r) => r.reported / r.estimated).sort((a, b) => a - b);
  const median = ratios[Math.floor((ratios.length - 1) / 2)];
  const faults = usable.filter((r) => r.reported / r.estimated > faultRatio * median);
  const kept = ratios.filter((x) => x <= faultRatio * median);
  if (kept.length < minSamples) return { factor: 1, samples: kept.length, faults };
  const index = Math.min(kept.length - 1, Math.max(0, Math.ceil(quantile * kept.length) - 1));
  return { factor: Math.max(1, kept[index]), samples: kept.length, faults };
}

/** {@link learnCalibrationDetailed}'s factor alone (≥ 1; 1 with fewer than 20 usable records). */
export function learnCalibration(records: readonly UsageRecord[], options: CalibrationOptions = {}): number {
  return learnCalibrationDetailed(records, options).factor;
}
