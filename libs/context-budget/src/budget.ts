/** `max_tokens` reserved for generation on /ask when the project sets none (seed 000: "default 2048"). */
export const DEFAULT_MAX_TOKENS = 2048;

/** Flat reserve for the system prompt and scaffolding, in tokens (seed 000: "~600 tokens"). */
export const DEFAULT_RESERVE = 600;

/** Safety margin with an exact counter, percent of the window (seed 000: 5%). */
export const EXACT_MARGIN_PERCENT = 5;

/** Safety margin with the approximate counter, percent of the window (seed 000: 15%). */
export const APPROXIMATE_MARGIN_PERCENT = 15;

/** What `computeBudget` needs. All figures are tokens. */
export interface BudgetInput {
  /** The context window planned against (catalog, override or cap; see model-catalog `resolveModel`). */
  window: number;
  /** Reserved for generation; default 2048. */
  maxTokens?: number;
  /** Reserved for the system prompt and scaffolding; default 600. */
  reserve?: number;
  /** True when the token counter is exact (5% margin); false for the approximate counter (15%). */
  exact: boolean;
  /**
   * The safety margin, percent of the window, when the caller sized it from evidence (the calibrated
   * estimate's {@link SafetyMargin}); absent: the seed's 5% exact / 15% approximate. Never below 5%
   * (the exact counter's), at most 100.
   */
  marginPercent?: number;
}

/**
 * Which safety margin a plan used and why (the `budget` event's `marginBasis`):
 * - `exact`: an exact counter, the seed's 5%;
 * - `approximate`: the approximate estimate without enough evidence, the seed's 15%;
 * - `calibrated`: the project's calibrated estimate, sized from the spread of its own observed
 *   ratios with a floor of 5% (token-counting `ScriptCalibratedCounter.safetyMargin`).
 */
export interface SafetyMargin {
  /** Percent of the window (5 ≤ percent ≤ 100). */
  percent: number;
  basis: 'exact' | 'approximate' | 'calibrated';
  /** `calibrated`: the largest observed spread of the classes applied (a share of the largest request, 0.031 = 3.1%). */
  spread?: number;
  /** `calibrated`: the script classes whose factors this prompt applied (`latin`, `cjk`). */
  classes?: string[];
  /** `calibrated`: the share of the counted tokens in script classes new to the project (planned with the estimate), 0–1. */
  estimateShare?: number;
}

/** The margin in tokens for a window: ⌈window × percent / 100⌉, in integer arithmetic for the seed's whole percents. */
function marginTokens(window: number, exact: boolean, marginPercent: number | undefined): number {
  if (marginPercent === undefined)
    return Math.ceil((window * (exact ? EXACT_MARGIN_PERCENT : APPROXIMATE_MARGIN_PERCENT)) / 100);
  return Math.ceil((window * marginPercent) / 100 - 1e-9);
}

/** The budget of one request. All figures are tokens. */
export interface Budget {
  window: number;
  maxTokens: number;
  reserve: number;
  /** ceil(window × 5%) with an exact counter, ceil(window × 15%) with the approximate one, or ceil(window × `marginPercent`). */
  margin: number;
  /**
   * window − maxTokens − reserve − margin: what the question, retrieved context and earlier turns may
   * use. Zero or negative when the window cannot hold the rest; planning then answers 413.
   */
  available: number;
  exact: boolean;
}

function checkTokens(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`${name} must be a whole number of tokens ≥ ${min}, got ${value}`);
  }
}

/**
 * The seed 000 budget formula:
 * `available = window − max_tokens − reserve − ceil(window × (exact ? 5% : 15%))`.
 *
 * With `marginPercent` (a margin sized from calibration evidence) the margin is
 * `ceil(window × marginPercent / 100)` instead.
 *
 * Examples (tokens): window 128000 exact → 118952; 32000 approximate → 24552; 8192 approximate with
 * max_tokens 1024 → 5339; 8192 with marginPercent 6.25 (margin 512) → 5032.
 *
 * @throws RangeError when a figure is not a whole number, the window or max_tokens is not positive,
 *   the reserve is negative, max_tokens is not smaller than the window, or `marginPercent` is not
 *   a number in [5, 100]. Never an `AskError`:
 *   these are configuration mistakes, not an overflow.
 */
export function computeBudget(input: BudgetInput): Budget {
  const { window, maxTokens = DEFAULT_MAX_TOKENS, reserve = DEFAULT_RESERVE, exact, marginPercent } = input;
  checkTokens('window', window, 1);
  checkTokens('maxTokens', maxTokens, 1);
  checkTokens('reserve', reserve, 0);
  if (maxTokens >= window) {
    throw new RangeError(`maxTokens (${maxTokens}) must be smaller than the window (${window})`);
  }
  if (marginPercent !== undefined && !(marginPercent >= EXACT_MARGIN_PERCENT && marginPercent <= 100)) {
    throw new RangeError(`marginPercent must be a percent in [${EXACT_MARGIN_PERCENT}, 100], got ${marginPercent}`);
  }
  // Integer arithmetic for the seed's percents: window × 15 is exact, so the ceiling never picks up a crumb.
  const margin = marginTokens(window, exact, marginPercent);
  return { window, maxTokens, reserve, margin, available: window - maxTokens - reserve - margin, exact };
}

/** What does not fit when a project's settings leave no room for a prompt. All figures are tokens. */
export interface BudgetShortfall {
  window: number;
  maxTokens: number;
  reserve: number;
  margin: number;
  /** window − maxTokens − reserve − margin; below 1 (nothing left for the question). */
  available: number;
}

/**
 * The figures of a budget that leaves no token for the question (`available < 1`, which includes
 * `maxTokens ≥ window`), or undefined when the settings can hold a prompt. The same arithmetic as
 * {@link computeBudget}, `marginPercent` included (the worker passes the smallest margin the project's
 * calibrated estimate can plan with, so a project whose evidence earned a 5% margin is not refused at
 * the seed's 15%), but it never throws: the gateway refuses such settings with a 400 when they are
 * set, and the worker answers a 413 with these figures when a later catalog change (or a window the
 * provider disclosed) makes stored settings impossible. A `marginPercent` outside [5, 100] is read as
 * absent (the seed's margin).
 */
export function budgetShortfall(input: BudgetInput): BudgetShortfall | undefined {
  const { window, maxTokens = DEFAULT_MAX_TOKENS, reserve = DEFAULT_RESERVE, exact } = input;
  const percent =
    !exact &&
    input.marginPercent !== undefined &&
    input.marginPercent >= EXACT_MARGIN_PERCENT &&
    input.marginPercent <= 100
      ? input.marginPercent
      : undefined;
  const margin = marginTokens(window, exact, percent);
  const available = window - maxTokens - reserve - margin;
  return available >= 1 ? undefined : { window, maxTokens, reserve, margin, available };
}
