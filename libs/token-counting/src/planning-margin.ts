import {
  calibrationOf,
  classShortfall,
  type ClassMargins,
  fitScriptCalibration,
  SCRIPT_CLASSES,
  type ScriptCalibration,
  type ScriptClass,
  type ScriptCalibrationOptions,
  type ScriptUsageRecord,
} from './script-calibration';

/** Options of {@link learnPlanningCalibration}; the calibration's own options apply as well. */
export interface PlanningMarginOptions extends ScriptCalibrationOptions {
  /** The lowest margin, percent of the window; default 5 (the seed's margin for an exact counter). */
  floorPercent?: number;
  /** Margin per unit of spread: percent = max(floor, 100 × `spreadMultiple` × spread); default 2. */
  spreadMultiple?: number;
  /** Usage records of its own a class needs before its margin follows its spread; default 8. */
  minRecords?: number;
}

/**
 * Defaults of {@link PlanningMarginOptions}. `spreadMultiple` 2 and `minRecords` 8 were chosen on the
 * packing bench's fit-set sessions (bench/packing: mt-bench-101, oasst1-zh, the UDHR languages the
 * rates were fitted on, the emoji file) and are reported on its held-out ones (arena-hard-en and the
 * held-out UDHR languages, token-counting/testing `split.ts`).
 */
export const PLANNING_MARGIN_DEFAULTS: Required<Omit<PlanningMarginOptions, keyof ScriptCalibrationOptions>> = {
  floorPercent: 5,
  spreadMultiple: 2,
  minRecords: 8,
};

/** What the planner plans with: the factors and each class's margin. */
export interface PlanningCalibration {
  /**
   * Per-class factors: the least-squares fit (each ≥ 1) for a class with a margin of its own; the
   * bounded factor of {@link learnScriptCalibration} (raised to the worst record) for the others.
   */
  calibration: ScriptCalibration;
  /** Per-class margins, for the calibrated classes with `minRecords` usage records or more. */
  margins: ClassMargins;
  /** The classes with floor tokens in any record read (see `MarginEvidence.seen`). */
  seen: ScriptClass[];
}

/**
 * Learns what a project plans with from its own records (newest first), so one tenant's text never
 * moves another's margin: the margin follows the evidence.
 *
 * - **Factors**: the least-squares fit of {@link learnScriptCalibration} (steps 1–2: attribution over
 *   mixed requests, the evidence rule), without step 3's raise to the worst record, so a typical
 *   request is planned at its expected size rather than at the worst ratio seen, on each class's
 *   basis (its floor, or its estimate where its records fit that better: step 4 there). A calibrated
 *   class without a margin of its own (below) keeps the bounded factor.
 * - **Margin per class**: over the class's usage records (the ones that list it, the `recent` newest),
 *   the under-count of the fit, reported − planned, where the planner would count a request as
 *   {@link learnScriptCalibration}'s bound does; the spread is the largest under-count divided by the
 *   class's largest planned request (so an early request of 200 tokens under-counted by 30 weighs as
 *   30 tokens of a full prompt, not 15%: what overflows a window is tokens). The margin is
 *   `max(floorPercent, 100 × spreadMultiple × spread)` percent of the window, rounded up to 0.01. A class with
 *   fewer than `minRecords` usage records of its own, or calibrated only by an overflow, has no
 *   margin here: it plans with the seed's 15% (`ScriptCalibratedCounter.safetyMargin`).
 *
 * Worked example (planning-margin.spec.ts): eight Latin requests of 500 … 4,000 floor tokens, reported
 * 11 + 1.2 × floor except 150 tokens more at 4,000 and 300 fewer at 2,000: the fit is 1.2, the largest
 * under-count 150 of a largest planned request of 4,811, spread 0.0312, margin max(5, 2 × 3.12) = 6.24%.
 *
 * Reads only the records it is given: the caller passes the project's own (planning-memory.ts), so no
 * other project's traffic can move a project's margin. Deterministic; never throws.
 */
export function learnPlanningCalibration(
  records: readonly ScriptUsageRecord[],
  options: PlanningMarginOptions = {},
): PlanningCalibration {
  const { floorPercent, spreadMultiple, minRecords } = { ...PLANNING_MARGIN_DEFAULTS, ...options };
  const fit = fitScriptCalibration(records, options);
  const margins: ClassMargins = {};
  SCRIPT_CLASSES.forEach((cls, c) => {
    if (!fit.calibrated[c]) return;
    const { largest, short, usage } = classShortfall(fit.observations, c, fit.calibrated, fit);
    if (usage < minRecords || !(largest > 0)) return;
    const spread = short / largest;
    const percent = Math.max(floorPercent, Math.ceil(100 * spreadMultiple * spread * 100 - 1e-9) / 100);
    margins[cls] = { percent, spread: Number(spread.toFixed(4)), records: usage };
  });
  // A class without a margin of its own keeps the bounded factor: with the seed's 15% it plans as before.
  const factors = fit.fitted.map((f, c) => (margins[SCRIPT_CLASSES[c]] ? f : fit.bounded[c]));
  const seen = SCRIPT_CLASSES.filter((_, c) => fit.observations.some((o) => o.floor[c] > 0));
  return { calibration: calibrationOf(fit, factors), margins, seen };
}
