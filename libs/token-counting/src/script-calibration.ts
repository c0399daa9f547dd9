import { APPROX_PER_MESSAGE_TOKENS, APPROX_PER_REQUEST_TOKENS } from './script-aware-counter';
import { addScriptFeatures, FEATURE_COUNT, FEATURE_NAMES, type FeatureName } from './script-features';
import { SCRIPT_V1_FLOOR_RATES, SCRIPT_V1_RATES } from './script-rates';
import { type ChatMessage, countFramedMessages, type TokenCounter } from './token-counter';

/**
 * Script classes calibration learns one factor for. A tokenizer's tokens per character differ far
 * more between these than within one (English vs Hindi vs Chinese), so one factor per model, learned
 * on one script, under-counts another: the drift issue 12 measured (0.46–0.69× the truth on Hindi
 * after a factor learned on Chinese). `symbols` is a text without letters (digits, punctuation, code).
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

/** A usage record lists the classes that carry at least this share of its floor estimate. */
export const RECORD_CLASS_SHARE = 0.1;

/** One text measured in one pass of the script features. Figures are tokens without framing. */
export interface TextMeasure {
  /** `approx:script-v1` (the uncalibrated estimate, meant never to be low). */
  estimate: number;
  /** `approx:script-v1-floor` (at or under every reference tokenizer; calibration multiplies it). */
  floor: number;
  /** Bit i set: class `SCRIPT_CLASSES[i]` carries ≥ 10% of the text's letter tokens; 0 for the empty text. */
  mask: number;
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
  return { estimate: Math.ceil(estimate), floor: Math.ceil(floor), mask };
}

/** The classes of a mask, in `SCRIPT_CLASSES` order. */
export function classesOf(mask: number): ScriptClass[] {
  return SCRIPT_CLASSES.filter((_, i) => (mask & (1 << i)) !== 0);
}

/** One class's learned factor. */
export interface ScriptFactor {
  /** reported ÷ floor estimate: the worst (largest) of the class's recent records, ≥ 1. */
  factor: number;
  /** Records it was learned from. */
  samples: number;
}

/** Per-class factors; a class without enough evidence is absent (its texts plan with the estimate). */
export type ScriptCalibration = Partial<Record<ScriptClass, ScriptFactor>>;

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
}

/** Options of {@link learnScriptCalibration}. */
export interface ScriptCalibrationOptions {
  /** Records a class needs before it is calibrated; default 10. */
  minSamples?: number;
  /** Newest records per class considered; default 50. */
  recent?: number;
}

/** Defaults of {@link ScriptCalibrationOptions}. */
export const SCRIPT_CALIBRATION_DEFAULTS: Required<ScriptCalibrationOptions> = { minSamples: 10, recent: 50 };

/**
 * Learns one factor per script class from records (newest first), so that calibration can only make
 * planning safer under drift:
 *
 * - a class is calibrated once it has `minSamples` single-class usage records (the request was in
 *   that class alone), or at once after one overflow record that lists it (the provider disclosed
 *   how much we under-counted: the next ask must not overflow again);
 * - its factor is the LARGEST reported ÷ estimated of the `recent` newest records that list it,
 *   mixed ones included, never below 1. Nothing is discarded as a fault: a ratio far above the rest
 *   is exactly the evidence of a change (another tokenizer behind the id, another language), so it
 *   raises the factor at once, and leaves it only when `recent` newer records have replaced it.
 *
 * A mixed record's ratio is an average over its classes, so it raises each listed class's factor but
 * never enables a class by itself. Never throws.
 */
export function learnScriptCalibration(
  records: readonly ScriptUsageRecord[],
  options: ScriptCalibrationOptions = {},
): ScriptCalibration {
  const { minSamples, recent } = { ...SCRIPT_CALIBRATION_DEFAULTS, ...options };
  const ratios = new Map<ScriptClass, number[]>();
  const single = new Map<ScriptClass, number>();
  const overflowed = new Set<ScriptClass>();
  for (const r of records) {
    if (!(r.estimated > 0 && r.reported > 0 && Number.isFinite(r.estimated + r.reported))) continue;
    const classes = (r.script ?? '')
      .split('+')
      .filter((c): c is ScriptClass => (SCRIPT_CLASSES as readonly string[]).includes(c));
    for (const cls of classes) {
      const list = ratios.get(cls) ?? [];
      if (list.length >= recent) continue;
      list.push(r.reported / r.estimated);
      ratios.set(cls, list);
      if (r.source === 'overflow') overflowed.add(cls);
      else if (classes.length === 1) single.set(cls, (single.get(cls) ?? 0) + 1);
    }
  }
  const out: ScriptCalibration = {};
  for (const cls of SCRIPT_CLASSES) {
    const list = ratios.get(cls);
    if (!list || ((single.get(cls) ?? 0) < minSamples && !overflowed.has(cls))) continue;
    out[cls] = { factor: Math.max(1, ...list), samples: list.length };
  }
  return out;
}

/**
 * The floor estimate and the script classes of a request from the measures of its parts (system
 * prompt, context, kept turns, question), plus OpenAI-like framing (4 per message, 3 per request,
 * the calibration base's): what a usage record stores. A part's floor estimate is shared evenly
 * among its classes; `script` lists the classes with ≥ 10% of the total, joined by `+` in
 * `SCRIPT_CLASSES` order (`latin`, `cjk+devanagari`), or null when there is none.
 */
export function usageRecordOf(
  parts: readonly TextMeasure[],
  messages: number,
): { estimated: number; script: string | null } {
  let total = 0;
  const byClass = new Float64Array(SCRIPT_CLASSES.length);
  for (const p of parts) {
    total += p.floor;
    const classes = classesOf(p.mask);
    for (const cls of classes) byClass[SCRIPT_CLASSES.indexOf(cls)] += p.floor / classes.length;
  }
  const listed = SCRIPT_CLASSES.filter((_, c) => total > 0 && byClass[c] >= RECORD_CLASS_SHARE * total);
  return { estimated: total + 4 * messages + 3, script: listed.length ? listed.join('+') : null };
}

/**
 * The approximate planning counter, calibrated per script class (issue 12 item 1). A text whose every
 * class has a learned factor counts `⌈floor × the largest of those factors⌉`; a text with any class
 * that has none counts the uncalibrated estimate `approx:script-v1` (meant never to be low). So
 * calibration tightens only the scripts it has evidence for, and a new script, or a session that
 * switches script mid-way, plans its new texts as if nothing had been learned. Framing is the
 * estimate's (8 per message, 8 per request).
 *
 * `id` is `approx:script-v1` when no class is calibrated (the counts are then exactly the estimate's),
 * else `approx:script-v1+calibration`. Measures are memoised per instance: make one per ask.
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

  constructor(readonly calibration: ScriptCalibration) {
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

  /** The factor for a text of these classes: the largest of theirs, or undefined when one has none. */
  factorFor(mask: number): number | undefined {
    if (mask === 0) return 1;
    let factor = 0;
    for (let c = 0; c < SCRIPT_CLASSES.length; c++) {
      if ((mask & (1 << c)) === 0) continue;
      const learned = this.calibration[SCRIPT_CLASSES[c]];
      if (!learned) return undefined;
      factor = Math.max(factor, learned.factor);
    }
    return factor;
  }

  /** Planning tokens of a measured text (e.g. one read from a message's cached counts). */
  countMeasured(m: TextMeasure): number {
    const factor = this.factorFor(m.mask);
    if (factor === undefined) return m.estimate;
    this.maxApplied = Math.max(this.maxApplied, factor);
    return m.floor === 0 ? 0 : Math.ceil(m.floor * factor - 1e-9);
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
