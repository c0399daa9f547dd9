import { APPROX_PER_MESSAGE_TOKENS, APPROX_PER_REQUEST_TOKENS } from './script-aware-counter';
import { addScriptFeatures, FEATURE_COUNT, FEATURE_NAMES, type FeatureName } from './script-features';
import { SCRIPT_V1_FLOOR_RATES, SCRIPT_V1_RATES } from './script-rates';
import { type ChatMessage, countFramedMessages, type TokenCounter } from './token-counter';

/**
 * Script classes calibration learns one factor for. A tokenizer's tokens per character differ far
 * more between these than within one (English vs Hindi vs Chinese), so one factor per model, learned
 * on one script, under-counts another (as it did on the corpus: a factor learned on Chinese left
 * Hindi under the truth). `symbols` is a text without letters (digits, punctuation, code).
 */
export const SCRIPT_CLASSES = [
  'latin',
  'cyrillic',
  'greek',
  'arabic',
  'hebrew',
  'devanagari',
  'indic',
  'thai',
  'seasian',
  'other',
  'cjk',
  'hangul',
  'symbols',
] as const;
export type ScriptClass = (typeof SCRIPT_CLASSES)[number];

const CLASS_OF_FEATURE: Partial<Record<FeatureName, ScriptClass>> = {
  asciiLetter: 'latin',
  capsRun: 'latin',
  latinExtLetter: 'latin',
  latinWord: 'latin',
  commonWord: 'latin',
  cyrillicLetter: 'cyrillic',
  cyrillicWord: 'cyrillic',
  greekLetter: 'greek',
  greekWord: 'greek',
  arabicLetter: 'arabic',
  arabicWord: 'arabic',
  hebrewLetter: 'hebrew',
  hebrewWord: 'hebrew',
  devanagariLetter: 'devanagari',
  devanagariWord: 'devanagari',
  indicLetter: 'indic',
  indicWord: 'indic',
  thaiLetter: 'thai',
  seAsianLetter: 'seasian',
  otherLetter: 'other',
  han: 'cjk',
  kana: 'cjk',
  hangul: 'hangul',
};

/** Feature index → class index, −1 for features every script shares (spaces, digits, punctuation…). */
const FEATURE_CLASS_INDEX = Int8Array.from(FEATURE_NAMES, (name) => {
  const cls = CLASS_OF_FEATURE[name];
  return cls === undefined ? -1 : SCRIPT_CLASSES.indexOf(cls);
});
const SYMBOLS_BIT = 1 << SCRIPT_CLASSES.indexOf('symbols');
const V1 = Float64Array.from(FEATURE_NAMES, (name) => SCRIPT_V1_RATES[name]);
const FLOOR = Float64Array.from(FEATURE_NAMES, (name) => SCRIPT_V1_FLOOR_RATES[name]);

/**
 * A class is "in" a text when it carries at least this share of the text's letter tokens (floor
 * estimate). A smaller share rides on the text's main classes' factors: at 10% and a class twice as
 * dense, the under-count is at most ~10% of that text, inside the 15% approximate margin.
 */
export const CLASS_PRESENCE_SHARE = 0.1;

/** A usage record lists the classes that carry at least this share of its floor estimate (the learner: or of its estimate). */
export const RECORD_CLASS_SHARE = 0.1;

/** One text measured in one pass of the script features. Figures are tokens without framing. */
export interface TextMeasure {
  /** `approx:script-v1` (the uncalibrated estimate, meant never to be low). */
  estimate: number;
  /** `approx:script-v1-floor` (at or under every reference tokenizer; calibration multiplies it). */
  floor: number;
  /** Bit i set: class `SCRIPT_CLASSES[i]` carries ≥ 10% of the text's letter tokens; 0 for the empty text. */
  mask: number;
  /**
   * When the mask has two classes or more (measured now, or read from counts cached with their
   * shares): each mask class's share of the text's letter floor (shares sum to 1). Calibration
   * attributes the text's floor and estimate by these shares (without them, evenly), and
   * `ScriptCalibratedCounter.countMeasured` plans the text class by class.
   */
  shares?: Partial<Record<ScriptClass, number>>;
}

/**
 * Measures a text: its estimate, its floor and its script classes, from one pass of
 * `addScriptFeatures` (linear in the text). `estimate` and `floor` equal `approximateCounter()` and
 * `calibrationBaseCounter()`'s `countText`.
 */
export function measureText(text: string, scratch = new Float64Array(FEATURE_COUNT)): TextMeasure {
  if (text.length === 0) return { estimate: 0, floor: 0, mask: 0 };
  scratch.fill(0);
  addScriptFeatures(text, scratch);
  let estimate = 0;
  let floor = 0;
  const byClass = new Float64Array(SCRIPT_CLASSES.length);
  let letters = 0;
  for (let i = 0; i < FEATURE_COUNT; i++) {
    estimate += scratch[i] * V1[i];
    const f = scratch[i] * FLOOR[i];
    floor += f;
    const cls = FEATURE_CLASS_INDEX[i];
    if (cls >= 0) {
      byClass[cls] += f;
      letters += f;
    }
  }
  let mask = 0;
  if (letters > 0) {
    for (let c = 0; c < byClass.length; c++) if (byClass[c] >= CLASS_PRESENCE_SHARE * letters) mask |= 1 << c;
  } else {
    mask = SYMBOLS_BIT;
  }
  const m: TextMeasure = { estimate: Math.ceil(estimate), floor: Math.ceil(floor), mask };
  const classes = classIndexes(mask);
  if (classes.length > 1) {
    const inMask = classes.reduce((sum, c) => sum + byClass[c], 0);
    m.shares = Object.fromEntries(classes.map((c) => [SCRIPT_CLASSES[c], byClass[c] / inMask]));
  }
  return m;
}

function classIndexes(mask: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < SCRIPT_CLASSES.length; c++) if ((mask & (1 << c)) !== 0) out.push(c);
  return out;
}

/** The classes of a mask, in `SCRIPT_CLASSES` order. */
export function classesOf(mask: number): ScriptClass[] {
  return SCRIPT_CLASSES.filter((_, i) => (mask & (1 << i)) !== 0);
}

/** One class's learned factor. */
export interface ScriptFactor {
  /**
   * Tokens per floor token of this class (≥ 1), or per estimate token with `basis: 'estimate'` (at
   * least the class's floor ÷ estimate): the least-squares share of the reported prompt tokens,
   * raised until no record the class appears in is under-counted (see {@link learnScriptCalibration}).
   */
  factor: number;
  /**
   * What the factor multiplies: the class's floor (absent, the default) or its uncalibrated estimate,
   * where the project's records scatter less around one factor of the estimate (step 4 of
   * {@link learnScriptCalibration}).
   */
  basis?: 'estimate';
  /** Records that list the class (≥ 10% of the request's floor or of its estimate). */
  samples: number;
  /** Σ of the class's share of each usage record's estimate: requests' worth of evidence (a pure request is 1). */
  evidence?: number;
}

/** Per-class factors; a class without enough evidence is absent (its texts plan with the estimate). */
export type ScriptCalibration = Partial<Record<ScriptClass, ScriptFactor>>;

/** One class's part of a request: `[floor tokens, estimate tokens]` (no framing). */
export type ClassMass = readonly [floor: number, estimate: number];

/** One calibration observation: the floor estimate of what was sent and what the provider counted. */
export interface ScriptUsageRecord {
  /** Floor estimate of the request sent, framing included (see {@link usageRecordOf}). */
  estimated: number;
  /** Prompt tokens the provider reported, or the prompt size an overflow disclosed. */
  reported: number;
  /** The classes that carry ≥ 10% of the request, joined by `+` (`cjk`, `cjk+devanagari`); null: none. */
  script: string | null;
  /** `usage`: an answer's reported usage; `overflow`: the prompt size an overflow disclosed. Default `usage`. */
  source?: 'usage' | 'overflow';
  /**
   * The request's floor and estimate per class (framing excluded: it is `estimated` − Σ floors).
   * Absent on records stored before records carried script masses: then `estimated` is shared evenly among `script`'s
   * classes, with the floor standing for the estimate.
   */
  masses?: Partial<Record<ScriptClass, ClassMass>>;
}

/** Options of {@link learnScriptCalibration}. */
export interface ScriptCalibrationOptions {
  /** Requests' worth of evidence (Σ of the class's share of each usage record's estimate) a class needs; default 4. */
  minEvidence?: number;
  /** Newest records per class considered; default 50. */
  recent?: number;
}

/** Defaults of {@link ScriptCalibrationOptions}. */
export const SCRIPT_CALIBRATION_DEFAULTS: Required<ScriptCalibrationOptions> = { minEvidence: 4, recent: 50 };

/** A record as the learner reads it: framing, reported and the class masses (floor, estimate) by class index. @internal */
export interface Observation {
  framing: number;
  reported: number;
  floor: Float64Array;
  estimate: Float64Array;
  /** Σ floor over classes. */
  total: number;
  /** Σ estimate over classes. */
  estimated: number;
  overflow: boolean;
  listed: number[];
}

function observationOf(r: ScriptUsageRecord): Observation | undefined {
  if (!(r.estimated > 0 && r.reported > 0 && Number.isFinite(r.estimated + r.reported))) return undefined;
  const floor = new Float64Array(SCRIPT_CLASSES.length);
  const estimate = new Float64Array(SCRIPT_CLASSES.length);
  if (r.masses) {
    for (const [cls, mass] of Object.entries(r.masses)) {
      const c = SCRIPT_CLASSES.indexOf(cls as ScriptClass);
      if (c < 0 || !mass || !(mass[0] >= 0 && mass[1] >= 0)) continue;
      floor[c] += mass[0];
      estimate[c] += mass[1];
    }
  } else {
    const classes = (r.script ?? '')
      .split('+')
      .map((cls) => SCRIPT_CLASSES.indexOf(cls as ScriptClass))
      .filter((c) => c >= 0);
    for (const c of classes) {
      floor[c] += r.estimated / classes.length;
      estimate[c] += r.estimated / classes.length;
    }
  }
  const total = floor.reduce((sum, f) => sum + f, 0);
  if (!(total > 0)) return undefined;
  const estimated = estimate.reduce((sum, e) => sum + e, 0);
  const listed = classIndexes(
    floor.reduce(
      (mask, f, c) =>
        f >= RECORD_CLASS_SHARE * total || (f > 0 && estimate[c] >= RECORD_CLASS_SHARE * estimated)
          ? mask | (1 << c)
          : mask,
      0,
    ),
  );
  return {
    framing: Math.max(0, r.estimated - total),
    reported: r.reported,
    floor,
    estimate,
    total,
    estimated,
    overflow: r.source === 'overflow',
    listed,
  };
}

/**
 * Bounded least squares: 0 ≤ g ≤ `upper` minimising Σ_i (Σ_c g_c x_ic − y_i)², by projected
 * Gauss–Seidel on the normal equations (k ≤ 13 unknowns: k² per sweep). Converges to a minimiser for
 * any data; on a consistent system with a unique solution inside the box, to that solution.
 */
function nonNegativeLeastSquares(
  rows: readonly Float64Array[],
  y: readonly number[],
  k: number,
  upper: readonly number[],
): Float64Array {
  const a = new Float64Array(k * k);
  const b = new Float64Array(k);
  rows.forEach((x, i) => {
    for (let c = 0; c < k; c++) {
      if (x[c] === 0) continue;
      b[c] += x[c] * y[i];
      for (let d = 0; d < k; d++) a[c * k + d] += x[c] * x[d];
    }
  });
  const g = new Float64Array(k);
  for (let sweep = 0; sweep < 5000; sweep++) {
    let moved = 0;
    for (let c = 0; c < k; c++) {
      const acc = a[c * k + c];
      if (!(acc > 0)) continue;
      let r = b[c];
      for (let d = 0; d < k; d++) if (d !== c) r -= a[c * k + d] * g[d];
      const next = Math.min(upper[c], Math.max(0, r / acc));
      moved = Math.max(moved, Math.abs(next - g[c]));
      g[c] = next;
    }
    if (moved < 1e-12) break;
  }
  return g;
}

/**
 * Learns one factor per script class from a project's records (newest first), mixed-script
 * requests included:
 *
 * 1. **Attribution.** Each record says: reported ≈ framing + Σ_c factor_c × floor_c, over the floor
 *    tokens of each class in the request (`masses`). The factors are fitted by least squares with
 *    every factor ≥ 1 (the floor is at or under every reference tokenizer) and a class short of
 *    step 2's evidence at most at its estimate (so it cannot act as an intercept), over the `recent`
 *    newest records that list each class, so a class learns from the requests it shares with others.
 * 2. **Evidence.** A class is calibrated once the shares of the usage records' estimate it carries
 *    add up to `minEvidence` requests (a pure request counts 1, a request whose estimate it is 30% of
 *    counts 0.3), or at once when an overflow record lists it (the provider disclosed how much we
 *    under-counted). The estimate's share, not the floor's: it is what the class's factor replaces in
 *    a plan (the floor's Indic rate is a tenth of the estimate's, so Bengali questions beside English
 *    chunks weighed 0.18 of each request and planned at ~11 × their floor for 36 asks). A class short
 *    of that is absent: its texts keep the uncalibrated estimate (the safe side), never the factor of
 *    the classes it was mixed with. A record lists a class with ≥ 10% of its floor or of its estimate.
 * 3. **Bound.** No record may be under-counted by what the planner would count for it: framing +
 *    Σ over calibrated classes factor × floor + Σ over the others their estimate. Where a record is,
 *    the calibrated class of that record with the least evidence (the least known) is raised until it
 *    is not. So a factor is at least what every observed request supports; with one class alone it is
 *    the largest ratio of its records, as before records carried masses.
 * 4. **Basis.** A calibrated class multiplies its floor, unless its records fit one factor of its
 *    estimate better: steps 1 and 3 are run with the class's estimate as its column (its factor
 *    at least the largest floor ÷ estimate of its records, so it never plans under the floor), and the
 *    estimate is kept when the spread of the least-squares fit over the class's usage records (the
 *    largest under-count as a share of the largest planned request, {@link classSpread}) falls by
 *    more than {@link BASIS_SPREAD_GAIN} and no other calibrated class's spread grows. The floor's
 *    rates differ more between kinds of text than the estimate's: under Mistral, PostgreSQL manual
 *    chunks beside UDHR prose counted 1.33–1.61 × their Latin floor but 0.94–1.04 × their estimate.
 *    Classes are tried in `SCRIPT_CLASSES` order, each once.
 *
 * Deterministic; never throws. Records without masses (stored before records carried them) share their floor
 * evenly among their `script` classes.
 */
export function learnScriptCalibration(
  records: readonly ScriptUsageRecord[],
  options: ScriptCalibrationOptions = {},
): ScriptCalibration {
  const fit = fitScriptCalibration(records, options);
  return calibrationOf(fit, fit.bounded);
}

/**
 * What {@link fitScriptCalibration} learns: the observations read, the fit, the bound and which
 * classes are calibrated. For planning-margin.ts; not part of the library's surface.
 * @internal
 */
export interface CalibrationFit {
  observations: Observation[];
  /** Records taken per class (the `recent` newest that list it). */
  taken: Int32Array;
  evidence: Float64Array;
  calibrated: boolean[];
  /** The least-squares factors (each ≥ 1), by class index. */
  fitted: number[];
  /** The fitted factors raised until no record is under-counted (step 3 of {@link learnScriptCalibration}). */
  bounded: number[];
  /** By class index: the factor multiplies the class's estimate, not its floor (step 4). */
  onEstimate: boolean[];
}

/**
 * Steps 1–3 of {@link learnScriptCalibration}, keeping the least-squares factors beside the bounded
 * ones (planning-margin.ts plans with the fit and sizes the margin from its residuals).
 * @internal
 */
export function fitScriptCalibration(
  records: readonly ScriptUsageRecord[],
  options: ScriptCalibrationOptions,
): CalibrationFit {
  const { minEvidence, recent } = { ...SCRIPT_CALIBRATION_DEFAULTS, ...options };
  const k = SCRIPT_CLASSES.length;
  const taken = new Int32Array(k);
  const observations: Observation[] = [];
  for (const r of records) {
    const o = observationOf(r);
    if (!o || o.listed.length === 0 || o.listed.every((c) => taken[c] >= recent)) continue;
    for (const c of o.listed) taken[c] += 1;
    observations.push(o);
  }
  const evidence = new Float64Array(k);
  const overflowed = new Set<number>();
  for (const o of observations) {
    if (o.overflow) o.listed.forEach((c) => overflowed.add(c));
    else
      for (let c = 0; c < k; c++) evidence[c] += o.estimated > 0 ? o.estimate[c] / o.estimated : o.floor[c] / o.total;
  }
  const calibrated = Array.from(
    { length: k },
    (_, c) => taken[c] > 0 && (evidence[c] >= minEvidence - 1e-9 || overflowed.has(c)),
  );
  const floorBasis = Array.from({ length: k }, () => false);
  let best = fitOnBasis(observations, evidence, calibrated, floorBasis);
  let spreads = SCRIPT_CLASSES.map((_, c) => (calibrated[c] ? classSpread(observations, c, calibrated, best) : 0));
  for (let c = 0; c < k; c++) {
    if (!calibrated[c] || !observations.some((o) => o.estimate[c] > 0 && o.estimate[c] !== o.floor[c])) continue;
    const onEstimate = best.onEstimate.map((e, d) => e || d === c);
    const trial = fitOnBasis(observations, evidence, calibrated, onEstimate);
    const trialSpreads = SCRIPT_CLASSES.map((_, d) =>
      calibrated[d] ? classSpread(observations, d, calibrated, trial) : 0,
    );
    if (
      trialSpreads[c] < spreads[c] - BASIS_SPREAD_GAIN &&
      trialSpreads.every((t, d) => d === c || t <= spreads[d] + 1e-9)
    ) {
      best = trial;
      spreads = trialSpreads;
    }
  }
  return { observations, taken, evidence, calibrated, ...best };
}

/**
 * How much lower (as a share of the class's largest request) the spread of a class's records must
 * be on its estimate before the class calibrates on it (step 4 of {@link learnScriptCalibration}):
 * 0.1% of a request, so records that fit both ways alike (a class whose estimate is a fixed multiple
 * of its floor) keep the floor.
 */
export const BASIS_SPREAD_GAIN = 0.001;

/**
 * Steps 1 and 3 of {@link learnScriptCalibration} with each class's column its floor, or its estimate
 * where `onEstimate` says so (calibrated classes only).
 */
function fitOnBasis(
  observations: readonly Observation[],
  evidence: Float64Array,
  calibrated: readonly boolean[],
  onEstimate: readonly boolean[],
): Pick<CalibrationFit, 'fitted' | 'bounded' | 'onEstimate'> {
  const k = SCRIPT_CLASSES.length;
  const column = (o: Observation, c: number) => (onEstimate[c] ? o.estimate[c] : o.floor[c]);
  // The lowest factor: 1 on the floor (at or under every reference tokenizer); on the estimate, the
  // largest floor ÷ estimate of the class's records, so no text plans under its floor.
  const lower = Array.from({ length: k }, (_, c) => {
    if (!onEstimate[c]) return 1;
    let most = 0;
    for (const o of observations) if (o.estimate[c] > 0) most = Math.max(most, o.floor[c] / o.estimate[c]);
    return most;
  });
  // Fit g = factor − lower ≥ 0 on y = reported − framing − Σ lower × column. A class short of evidence is fitted
  // no higher than its estimate (Σ estimate ÷ Σ floor of its records), what its texts plan with: a
  // column free to take any factor becomes an intercept (an English system prompt of ~50 tokens in
  // every request of a Bengali session taking a factor of 20), which lowers the calibrated factors
  // under what a large request needs.
  const upper = Array.from({ length: k }, (_, c) => {
    if (calibrated[c]) return Infinity;
    let floor = 0;
    let estimate = 0;
    for (const o of observations) {
      floor += o.floor[c];
      estimate += o.estimate[c];
    }
    return floor > 0 ? Math.max(0, estimate / floor - 1) : 0;
  });
  const g = nonNegativeLeastSquares(
    observations.map((o) => Float64Array.from({ length: k }, (_, c) => column(o, c))),
    observations.map((o) => o.reported - o.framing - lower.reduce((sum, l, c) => sum + l * column(o, c), 0)),
    k,
    upper,
  );
  const fitted = Array.from(g, (x, c) => lower[c] + x);
  const factor = [...fitted];
  const basis = { onEstimate: [...onEstimate] };
  for (const o of observations) {
    const short = o.reported - plannedFor(o, calibrated, { factor, onEstimate });
    if (!(short > 1e-9)) continue;
    let target = -1;
    for (let c = 0; c < k; c++) {
      if (!calibrated[c] || !(column(o, c) > 0)) continue;
      if (
        target < 0 ||
        evidence[c] < evidence[target] - 1e-9 ||
        (Math.abs(evidence[c] - evidence[target]) <= 1e-9 && column(o, c) > column(o, target))
      )
        target = c;
    }
    if (target >= 0) factor[target] += short / column(o, target);
  }
  return { fitted, bounded: factor, ...basis };
}

/**
 * The spread of a fit over a class's usage records (those that list it): the largest under-count,
 * reported − planned, as a share of the largest planned request (tokens overflow a window, so an
 * early small request weighs as its tokens, not its percent). `fit.fitted` are the factors. @internal
 */
export function classSpread(
  observations: readonly Observation[],
  c: number,
  calibrated: readonly boolean[],
  fit: Pick<CalibrationFit, 'fitted' | 'onEstimate'>,
): number {
  const { largest, short } = classShortfall(observations, c, calibrated, fit);
  return largest > 0 ? short / largest : 0;
}

/** The largest planned request, the largest under-count and the usage records of a class under a fit. @internal */
export function classShortfall(
  observations: readonly Observation[],
  c: number,
  calibrated: readonly boolean[],
  fit: Pick<CalibrationFit, 'fitted' | 'onEstimate'>,
): { largest: number; short: number; usage: number } {
  let largest = 0;
  let short = 0;
  let usage = 0;
  for (const o of observations) {
    if (o.overflow || !o.listed.includes(c)) continue;
    usage += 1;
    const planned = plannedFor(o, calibrated, { factor: fit.fitted, onEstimate: fit.onEstimate });
    largest = Math.max(largest, planned);
    short = Math.max(short, o.reported - planned);
  }
  return { largest, short, usage };
}

/**
 * What the planner would count for an observed request: framing, calibrated classes' factor × floor
 * (× estimate where the class is on its estimate), the others' estimate. @internal
 */
export function plannedFor(
  o: Observation,
  calibrated: readonly boolean[],
  { factor, onEstimate }: { factor: readonly number[]; onEstimate: readonly boolean[] },
): number {
  let planned = o.framing;
  for (let c = 0; c < SCRIPT_CLASSES.length; c++)
    planned += calibrated[c] ? factor[c] * (onEstimate[c] ? o.estimate[c] : o.floor[c]) : o.estimate[c];
  return planned;
}

/** The calibrated classes of a fit with these factors (by class index). @internal */
export function calibrationOf(fit: CalibrationFit, factor: readonly number[]): ScriptCalibration {
  const out: ScriptCalibration = {};
  for (let c = 0; c < SCRIPT_CLASSES.length; c++) {
    if (!fit.calibrated[c]) continue;
    out[SCRIPT_CLASSES[c]] = {
      factor: Number(factor[c].toFixed(6)),
      ...(fit.onEstimate[c] ? { basis: 'estimate' as const } : {}),
      samples: fit.taken[c],
      evidence: Number(fit.evidence[c].toFixed(3)),
    };
  }
  return out;
}

/** A text's estimate ÷ floor (1 for a text without floor tokens): turns a factor of the estimate into one of the floor. */
function basisRatio(m: Pick<TextMeasure, 'floor' | 'estimate'> | undefined): number {
  return m && m.floor > 0 ? m.estimate / m.floor : 1;
}

/** The seed's approximate margin (percent of the window), used for what calibration has no evidence for. */
const SEED_APPROXIMATE_MARGIN_PERCENT = 15;

/** Per class, how far a model id's reported prompt tokens went above the uncalibrated estimate (factors > 1). */
export type EstimatePrior = Partial<Record<ScriptClass, number>>;

/**
 * The model-wide prior: for each class, the largest reported ÷ estimate (the uncalibrated estimate of
 * the whole request: Σ of its classes' estimate plus the floor's framing) of the records that list
 * it, kept only when above 1: the model id counts more than the estimate, meant never to be low,
 * assumed. A mixed record's ratio goes to every class it lists (the safe side). Records without
 * masses (stored before records carried them) carry no estimate and teach nothing. Never throws.
 */
export function learnEstimatePrior(records: readonly ScriptUsageRecord[]): EstimatePrior {
  const out: EstimatePrior = {};
  for (const r of records) {
    if (!r.masses) continue;
    const o = observationOf(r);
    if (!o) continue;
    const planned = o.framing + o.estimate.reduce((sum, e) => sum + e, 0);
    const ratio = o.reported / planned;
    if (!(ratio > 1) || !Number.isFinite(ratio)) continue;
    for (const c of o.listed) out[SCRIPT_CLASSES[c]] = Math.max(out[SCRIPT_CLASSES[c]] ?? 1, Number(ratio.toFixed(6)));
  }
  return out;
}

/**
 * The largest model-wide prior that can never move a plan: the estimate is planned with the seed's 15%
 * margin (a class new to a project adds its share of 15% to a calibrated margin), so a request the
 * model id counted up to 1 ÷ (1 − 15%) ≈ 1.176 × its estimate fits where it was planned.
 */
export const PRIOR_MIN_RATIO = 1 / (1 - SEED_APPROXIMATE_MARGIN_PERCENT / 100);

/**
 * The prior a project plans with (no tenant moves another's budget): for a class
 * the project's own records hold, the prior of those records alone ({@link learnEstimatePrior} over
 * `own`), so the project plans exactly as it would alone on the model id; for a class new to the
 * project, the model-wide prior (`model`: every project's records of the model id), and only where it
 * is above {@link PRIOR_MIN_RATIO}: another tenant saw the estimate low by more than the seed's margin
 * absorbs, the one case where planning as alone could overflow. Never throws.
 */
export function projectEstimatePrior(
  own: readonly ScriptUsageRecord[],
  model: readonly ScriptUsageRecord[],
): EstimatePrior {
  const mine = learnEstimatePrior(own);
  let seen = 0;
  for (const r of own) {
    const o = observationOf(r);
    if (o) o.floor.forEach((f, c) => (seen |= f > 0 ? 1 << c : 0));
  }
  const wide = learnEstimatePrior(model);
  const out: EstimatePrior = {};
  SCRIPT_CLASSES.forEach((cls, c) => {
    const ratio = (seen & (1 << c)) !== 0 ? mine[cls] : wide[cls];
    if (ratio !== undefined && ((seen & (1 << c)) !== 0 || ratio > PRIOR_MIN_RATIO)) out[cls] = ratio;
  });
  return out;
}

/**
 * The floor estimate, the script classes and the per-class masses of a request from the measures of
 * its parts (system prompt, context, kept turns, question), plus OpenAI-like framing (4 per message,
 * 3 per request, the calibration base's): what a usage record stores. A part's floor and estimate
 * go to its classes by its `shares` (evenly without them); `script` lists the classes with ≥ 10% of
 * the floor, joined by `+` in `SCRIPT_CLASSES` order (`latin`, `cjk+devanagari`), or null when there
 * is none.
 */
export function usageRecordOf(
  parts: readonly TextMeasure[],
  messages: number,
): { estimated: number; script: string | null; masses: Partial<Record<ScriptClass, ClassMass>> } {
  let total = 0;
  const floor = new Float64Array(SCRIPT_CLASSES.length);
  const estimate = new Float64Array(SCRIPT_CLASSES.length);
  for (const p of parts) {
    total += p.floor;
    const classes = classesOf(p.mask);
    for (const cls of classes) {
      const share = p.shares?.[cls] ?? 1 / classes.length;
      const c = SCRIPT_CLASSES.indexOf(cls);
      floor[c] += p.floor * share;
      estimate[c] += p.estimate * share;
    }
  }
  const listed = SCRIPT_CLASSES.filter((_, c) => total > 0 && floor[c] >= RECORD_CLASS_SHARE * total);
  const masses: Partial<Record<ScriptClass, ClassMass>> = {};
  SCRIPT_CLASSES.forEach((cls, c) => {
    if (floor[c] > 0) masses[cls] = [round3(floor[c]), round3(estimate[c])];
  });
  return { estimated: total + 4 * messages + 3, script: listed.length ? listed.join('+') : null, masses };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * One class's safety margin, sized from the project's own records (planning-margin.ts
 * `learnPlanningCalibration`): `percent` of the window, at least the floor.
 */
export interface ClassMargin {
  /** Percent of the window (≥ 5). */
  percent: number;
  /** The largest under-count of the fit over the class's records, as a share of the class's largest request (0.031 = 3.1%). */
  spread: number;
  /** Usage records the spread was read from. */
  records: number;
}

/** Per-class margins; a class absent plans with the seed's 15%. */
export type ClassMargins = Partial<Record<ScriptClass, ClassMargin>>;

/** What a calibrated counter sizes its safety margin from (planning-margin.ts `learnPlanningCalibration`). */
export interface MarginEvidence {
  /** The margin of each class with enough records of its own. */
  margins: ClassMargins;
  /**
   * The classes present in any of the project's records (with floor tokens). The spreads were measured
   * on requests holding them, however they were planned; a class outside it is new to the project.
   */
  seen: readonly ScriptClass[];
}

/** The margin a calibrated counter asks for (the shape of context-budget's `SafetyMargin`). */
export interface CalibratedMargin {
  percent: number;
  basis: 'approximate' | 'calibrated';
  spread?: number;
  classes?: string[];
  estimateShare?: number;
}

/**
 * The approximate planning counter, calibrated per script class. A text whose every
 * class has a learned factor counts `⌈floor × the largest of those factors⌉`; a text with any class
 * that has none counts the uncalibrated estimate `approx:script-v1` (meant never to be low). So
 * calibration tightens only the scripts it has evidence for, and a new script, or a session that
 * switches script mid-way, plans its new texts as if nothing had been learned. Framing is the
 * estimate's (8 per message, 8 per request).
 *
 * A model-wide prior (`prior`: {@link learnEstimatePrior} over every project's records of the model
 * id) is used only for a text the project has no evidence for, and only where it is the safer figure:
 * such a text counts `⌈estimate × the largest prior of its classes⌉` (each prior > 1: the model id
 * was seen to count more than the estimate itself). So another project's traffic can make a plan
 * larger, never smaller, and only when the estimate was seen to be low for that model id: a denser
 * language of the same class elsewhere (German beside English) does not move it.
 *
 * `id` is `approx:script-v1` when no class is calibrated (the counts are then exactly the estimate's),
 * else `approx:script-v1+calibration`. Measures are memoised per instance: make one per ask.
 *
 * With `evidence` (planning-margin.ts `learnPlanningCalibration`, the project's own records), the
 * counter also says which safety margin its counts need ({@link safetyMargin}).
 */
export class ScriptCalibratedCounter implements TokenCounter {
  readonly id: string;
  readonly exact = false;
  readonly perMessageTokens = APPROX_PER_MESSAGE_TOKENS;
  readonly perRequestTokens = APPROX_PER_REQUEST_TOKENS;
  private readonly memo = new Map<string, TextMeasure>();
  private readonly scratch = new Float64Array(FEATURE_COUNT);
  /** The largest factor applied to any text counted so far (1 when none). */
  maxApplied = 1;
  /** Bit c set: a text counted so far applied class c's factor. */
  private appliedMask = 0;
  /** Tokens counted so far with a learned factor, and with the estimate (or the prior) for a text of a class the records never held. */
  private calibratedTokens = 0;
  private newTokens = 0;
  private readonly seen: number;

  constructor(
    readonly calibration: ScriptCalibration,
    readonly prior: EstimatePrior = {},
    readonly evidence?: MarginEvidence,
  ) {
    this.seen = (evidence?.seen ?? []).reduce((mask, cls) => mask | (1 << SCRIPT_CLASSES.indexOf(cls)), 0);
    this.id = Object.keys(calibration).length ? 'approx:script-v1+calibration' : 'approx:script-v1';
  }

  /** The text's measure (memoised). */
  measure(text: string): TextMeasure {
    let m = this.memo.get(text);
    if (!m) {
      m = measureText(text, this.scratch);
      this.memo.set(text, m);
    }
    return m;
  }

  /**
   * Tokens per floor token for a whole text of these classes: the largest over its classes of the
   * class's factor (× the text's estimate ÷ floor for a class calibrated on its estimate); undefined
   * when a class has no factor. `m` is the text's measure (its floor and estimate).
   */
  factorFor(mask: number, m?: Pick<TextMeasure, 'floor' | 'estimate'>): number | undefined {
    if (mask === 0) return 1;
    let factor = 0;
    for (let c = 0; c < SCRIPT_CLASSES.length; c++) {
      if ((mask & (1 << c)) === 0) continue;
      const learned = this.calibration[SCRIPT_CLASSES[c]];
      if (!learned) return undefined;
      factor = Math.max(factor, learned.factor * (learned.basis === 'estimate' ? basisRatio(m) : 1));
    }
    return factor;
  }

  /**
   * Planning tokens of a measured text (e.g. one read from a message's cached counts). A text of two
   * classes or more with its `shares` is planned class by class, as the learner plans a record
   * (`plannedFor`: the margins' spreads were measured that way): each calibrated class's share of the
   * floor × its factor, each other class's share of the estimate (raised by the prior where it is
   * above 1). So a Chinese answer carrying 20% Latin code plans its Han at the project's factor and
   * only its Latin at the estimate, instead of the whole text at the estimate. Without shares (a
   * measure read from counts cached before they were stored), the text plans at the largest factor
   * of its classes when all are calibrated, else at the estimate.
   */
  countMeasured(m: TextMeasure): number {
    if (m.shares && m.floor > 0) {
      const byClass = this.countByShares(m, m.shares);
      if (byClass !== undefined) return byClass;
    }
    const factor = this.factorFor(m.mask, m);
    if (factor === undefined) {
      // No evidence of the project's own: the estimate, raised by the model-wide prior where it is above 1.
      let prior = 1;
      for (const cls of classesOf(m.mask)) prior = Math.max(prior, this.prior[cls] ?? 1);
      const n = prior > 1 ? Math.ceil(m.estimate * prior - 1e-9) : m.estimate;
      if ((m.mask & ~this.seen) !== 0) this.newTokens += n;
      return n;
    }
    this.maxApplied = Math.max(this.maxApplied, factor);
    const n = m.floor === 0 ? 0 : Math.ceil(m.floor * factor - 1e-9);
    if (n > 0) {
      this.appliedMask |= m.mask;
      this.calibratedTokens += n;
    }
    return n;
  }

  /** {@link countMeasured} class by class; undefined when no class of the text is calibrated. */
  private countByShares(m: TextMeasure, shares: Partial<Record<ScriptClass, number>>): number | undefined {
    let calibrated = 0;
    let estimated = 0;
    let applied = 0;
    let newToThem = 0;
    for (const c of classIndexes(m.mask)) {
      const cls = SCRIPT_CLASSES[c];
      const share = shares[cls] ?? 0;
      if (!(share > 0)) continue;
      const learned = this.calibration[cls];
      if (learned) {
        const onEstimate = learned.basis === 'estimate';
        calibrated += (onEstimate ? m.estimate : m.floor) * share * learned.factor;
        applied |= 1 << c;
        this.maxApplied = Math.max(this.maxApplied, learned.factor * (onEstimate ? basisRatio(m) : 1));
      } else {
        const part = m.estimate * share * Math.max(1, this.prior[cls] ?? 1);
        estimated += part;
        if ((this.seen & (1 << c)) === 0) newToThem += part;
      }
    }
    if (applied === 0) return undefined;
    const n = Math.ceil(calibrated + estimated - 1e-9);
    this.appliedMask |= applied;
    // The rounding crumb goes with the calibrated part: what the margin's share reads is tokens.
    this.calibratedTokens += n - estimated;
    this.newTokens += newToThem;
    return n;
  }

  /**
   * The safety margin the texts counted so far need, percent of the window (ask it once the prompt's
   * every text is counted: context-budget `sizePrompt` does). Undefined without `evidence` (the
   * seed's rule applies). Otherwise:
   *
   * - no text applied a learned factor: the seed's 15% (`approximate`);
   * - else `calibrated`: the largest margin of the classes applied (15% for one with too few records
   *   of its own), plus 15% × N ÷ (N + min(C, window − maxTokens)), N the tokens of texts of a class
   *   the project's records never held (planned with the estimate, whose seed margin is 15%), C those
   *   planned with a factor (the prompt never holds more than window − maxTokens of them); never
   *   above max(15%, that largest class margin). Texts of classes the records did hold, calibrated or
   *   not (an English system prompt in a Chinese session), add nothing: the spreads were measured on
   *   requests that carried them, planned as they are now.
   *
   * `window` and `maxTokens` are tokens. Rounded up to 0.01%. Never throws.
   */
  safetyMargin(window: number, maxTokens: number): CalibratedMargin | undefined {
    if (!this.evidence) return undefined;
    if (this.appliedMask === 0 || !(this.calibratedTokens > 0))
      return { percent: SEED_APPROXIMATE_MARGIN_PERCENT, basis: 'approximate' };
    const classes = classesOf(this.appliedMask).filter((cls) => this.calibration[cls]);
    let classPercent = 0;
    let spread = 0;
    for (const cls of classes) {
      const m = this.evidence.margins[cls];
      classPercent = Math.max(classPercent, m?.percent ?? SEED_APPROXIMATE_MARGIN_PERCENT);
      spread = Math.max(spread, m?.spread ?? 0);
    }
    const room = Math.max(1, window - maxTokens);
    const estimateShare = this.newTokens / (this.newTokens + Math.min(this.calibratedTokens, room));
    const raw = Math.min(
      Math.max(SEED_APPROXIMATE_MARGIN_PERCENT, classPercent),
      classPercent + SEED_APPROXIMATE_MARGIN_PERCENT * estimateShare,
    );
    return {
      percent: Math.ceil(raw * 100 - 1e-9) / 100,
      basis: 'calibrated',
      spread: Number(spread.toFixed(4)),
      classes,
      estimateShare: Number(estimateShare.toFixed(4)),
    };
  }

  /**
   * The smallest safety margin (percent of the window) any prompt of this project can be planned
   * with: the lowest of its classes' margins (each ≥ 5), or the seed's 15% without evidence or
   * without a class margin. For checks made before a prompt is counted (settings that leave no room
   * for a question): a shortfall at this margin is one no plan can avoid.
   */
  lowestMarginPercent(): number {
    const percents = Object.values(this.evidence?.margins ?? {}).map(
      (m) => m?.percent ?? SEED_APPROXIMATE_MARGIN_PERCENT,
    );
    return Math.min(SEED_APPROXIMATE_MARGIN_PERCENT, ...percents);
  }

  /** Planning tokens of a text. */
  countText(text: string): number {
    return this.countMeasured(this.measure(text));
  }

  /** Σ (countText + 8) + 8. */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }
}
