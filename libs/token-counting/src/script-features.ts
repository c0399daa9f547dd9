import { COMMON_WORD_MAX_LENGTH, COMMON_WORDS } from './common-words';

/**
 * Splits a text into the counts the script-aware estimate multiplies by its rates: letters and words
 * per Unicode script, digits, whitespace, punctuation, emoji and symbol bytes, and the pathological runs
 * (long digit runs, URLs, base64/hex-like runs) that tokenizers break into many short tokens.
 *
 * One pass over the UTF-16 code units with a 64 KiB class table for the Basic Multilingual Plane; the
 * only look-ahead is at the start of an ASCII word (URL and base64 checks), so the cost stays linear.
 */

/** The features, in the order of {@link FEATURE_NAMES}. Units are code points unless the name says bytes or runs. */
export enum Feature {
  /** ASCII letters a–z, A–Z (code points). */
  AsciiLetter,
  /** Uppercase ASCII letters that follow another uppercase letter (ALLCAPS runs tokenize poorly). */
  CapsRun,
  /** Latin letters outside ASCII: accented Latin, Latin Extended, Vietnamese, IPA (code points). */
  LatinExtLetter,
  /** Runs of Latin letters (words), counted once per run. */
  LatinWord,
  CyrillicLetter,
  CyrillicWord,
  GreekLetter,
  GreekWord,
  /** Arabic, Persian, Urdu letters and marks, including presentation forms. */
  ArabicLetter,
  ArabicWord,
  HebrewLetter,
  HebrewWord,
  DevanagariLetter,
  DevanagariWord,
  /** Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam, Sinhala. */
  IndicLetter,
  IndicWord,
  /** Thai (written without spaces between words, so no word feature). */
  ThaiLetter,
  /** Lao, Tibetan, Myanmar, Khmer and other Southeast Asian scripts (code points). */
  SeAsianLetter,
  /** Armenian, Georgian, Ethiopic and other alphabets no tokenizer here trains much on (code points). */
  OtherLetter,
  /** CJK ideographs (all extensions and compatibility blocks) and fullwidth letters and digits. */
  Han,
  /** Hiragana, Katakana and their phonetic extensions, halfwidth Katakana. */
  Kana,
  /** Hangul syllables and jamo. */
  Hangul,
  /** Digits in runs of at most 6. */
  Digit,
  /** Digits in runs of 7 or more (phone numbers, ids, long literals). */
  LongDigit,
  /** Runs of digits (a number), counted once per run. */
  DigitRun,
  /** A single space between two non-space characters (usually merged into the next token). */
  Space,
  /** Every whitespace code point after the first in a run (indentation, alignment), tabs included. */
  ExtraSpace,
  /** Line breaks. */
  Newline,
  /** ASCII punctuation and symbols: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ */
  AsciiPunct,
  /** Non-ASCII punctuation: general punctuation, CJK and fullwidth punctuation, Latin-1 symbols. */
  OtherPunct,
  /** UTF-8 bytes of emoji, pictographs, regional indicators, ZWJ, variation selectors, skin tones. */
  EmojiBytes,
  /** UTF-8 bytes of other symbols: arrows, maths, box drawing, dingbats, private use, anything unclassified. */
  SymbolBytes,
  /** Code points inside URLs (`http://`, `https://`, `www.` up to whitespace or a closing bracket/quote). */
  UrlChar,
  /** Code points inside base64- or hex-like runs: 16+ chars of [A-Za-z0-9+/=] mixing letters and digits. */
  Base64Char,
  /**
   * Words of {@link COMMON_WORDS} (one token after a space in every reference tokenizer), counted once per
   * word; their letters are not counted as {@link AsciiLetter} and the word not as {@link LatinWord}.
   */
  CommonWord,
  /** Runs of two or more spaces or tabs (column alignment, indentation), counted once per run. */
  SpaceRun,
}

/** Names of the features for tables and the derivation script, indexed by {@link Feature}. */
export const FEATURE_NAMES = [
  'asciiLetter',
  'capsRun',
  'latinExtLetter',
  'latinWord',
  'cyrillicLetter',
  'cyrillicWord',
  'greekLetter',
  'greekWord',
  'arabicLetter',
  'arabicWord',
  'hebrewLetter',
  'hebrewWord',
  'devanagariLetter',
  'devanagariWord',
  'indicLetter',
  'indicWord',
  'thaiLetter',
  'seAsianLetter',
  'otherLetter',
  'han',
  'kana',
  'hangul',
  'digit',
  'longDigit',
  'digitRun',
  'space',
  'extraSpace',
  'newline',
  'asciiPunct',
  'otherPunct',
  'emojiBytes',
  'symbolBytes',
  'urlChar',
  'base64Char',
  'commonWord',
  'spaceRun',
] as const;

/** A feature's name, as used in rate tables. */
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Number of features; the length of every feature vector. */
export const FEATURE_COUNT = FEATURE_NAMES.length;

// Character classes of the table (not features: letters map to a letter feature plus a word feature).
const enum C {
  Symbol = 0,
  AsciiLower,
  AsciiUpper,
  LatinExt,
  Cyrillic,
  Greek,
  Arabic,
  Hebrew,
  Devanagari,
  Indic,
  Thai,
  SeAsian,
  OtherLetter,
  Han,
  Kana,
  Hangul,
  Digit,
  Space,
  Newline,
  AsciiPunct,
  OtherPunct,
  Emoji,
  /** Combining marks: belong to the word they follow, counted with the previous letter's script. */
  Mark,
}

/** Word feature of each letter class, or -1. */
const WORD_FEATURE: Int8Array = (() => {
  const w = new Int8Array(32).fill(-1);
  w[C.AsciiLower] = Feature.LatinWord;
  w[C.AsciiUpper] = Feature.LatinWord;
  w[C.LatinExt] = Feature.LatinWord;
  w[C.Cyrillic] = Feature.CyrillicWord;
  w[C.Greek] = Feature.GreekWord;
  w[C.Arabic] = Feature.ArabicWord;
  w[C.Hebrew] = Feature.HebrewWord;
  w[C.Devanagari] = Feature.DevanagariWord;
  w[C.Indic] = Feature.IndicWord;
  return w;
})();

/** Letter feature of each letter class, or -1. */
const LETTER_FEATURE: Int8Array = (() => {
  const f = new Int8Array(32).fill(-1);
  f[C.AsciiLower] = Feature.AsciiLetter;
  f[C.AsciiUpper] = Feature.AsciiLetter;
  f[C.LatinExt] = Feature.LatinExtLetter;
  f[C.Cyrillic] = Feature.CyrillicLetter;
  f[C.Greek] = Feature.GreekLetter;
  f[C.Arabic] = Feature.ArabicLetter;
  f[C.Hebrew] = Feature.HebrewLetter;
  f[C.Devanagari] = Feature.DevanagariLetter;
  f[C.Indic] = Feature.IndicLetter;
  f[C.Thai] = Feature.ThaiLetter;
  f[C.SeAsian] = Feature.SeAsianLetter;
  f[C.OtherLetter] = Feature.OtherLetter;
  f[C.Han] = Feature.Han;
  f[C.Kana] = Feature.Kana;
  f[C.Hangul] = Feature.Hangul;
  return f;
})();

/** Class of every BMP code point; built once per process (64 KiB). Ranges from the Unicode 15 block list. */
const BMP: Uint8Array = (() => {
  const t = new Uint8Array(0x10000); // default C.Symbol
  const set = (from: number, to: number, c: C) => t.fill(c, from, to + 1);
  // ASCII
  for (let i = 0x21; i <= 0x7e; i++) t[i] = C.AsciiPunct;
  set(0x61, 0x7a, C.AsciiLower);
  set(0x41, 0x5a, C.AsciiUpper);
  set(0x30, 0x39, C.Digit);
  t[0x20] = C.Space;
  t[0x09] = C.Space;
  t[0x0b] = C.Space;
  t[0x0c] = C.Space;
  t[0x0d] = C.Space;
  t[0x0a] = C.Newline;
  // Latin-1 punctuation and symbols, Latin letters
  set(0xa0, 0xbf, C.OtherPunct);
  t[0xa0] = C.Space;
  set(0xc0, 0x24f, C.LatinExt);
  t[0xd7] = C.OtherPunct;
  t[0xf7] = C.OtherPunct;
  set(0x250, 0x2af, C.LatinExt); // IPA
  set(0x2b0, 0x2ff, C.OtherPunct); // spacing modifier letters
  set(0x300, 0x36f, C.Mark);
  set(0x370, 0x3ff, C.Greek);
  set(0x1f00, 0x1fff, C.Greek);
  set(0x400, 0x52f, C.Cyrillic);
  set(0x1c80, 0x1c8f, C.Cyrillic);
  set(0x2de0, 0x2dff, C.Cyrillic);
  set(0xa640, 0xa69f, C.Cyrillic);
  set(0x530, 0x58f, C.OtherLetter); // Armenian
  set(0x590, 0x5ff, C.Hebrew);
  set(0xfb1d, 0xfb4f, C.Hebrew);
  set(0x600, 0x6ff, C.Arabic);
  set(0x750, 0x77f, C.Arabic);
  set(0x870, 0x8ff, C.Arabic);
  set(0xfb50, 0xfdff, C.Arabic);
  set(0xfe70, 0xfeff, C.Arabic);
  t[0x60c] = C.OtherPunct; // Arabic comma
  t[0x61b] = C.OtherPunct;
  t[0x61f] = C.OtherPunct;
  set(0x660, 0x669, C.Digit); // Arabic-Indic digits
  set(0x6f0, 0x6f9, C.Digit);
  set(0x700, 0x7ff, C.OtherLetter); // Syriac, Thaana, NKo
  set(0x800, 0x86f, C.OtherLetter);
  set(0x900, 0x97f, C.Devanagari);
  set(0xa8e0, 0xa8ff, C.Devanagari);
  set(0x964, 0x965, C.OtherPunct); // danda
  set(0x980, 0xdff, C.Indic);
  set(0x1cd0, 0x1cff, C.Indic);
  set(0xe00, 0xe7f, C.Thai);
  set(0xe80, 0xeff, C.SeAsian); // Lao
  set(0xf00, 0xfff, C.SeAsian); // Tibetan
  set(0x1000, 0x109f, C.SeAsian); // Myanmar
  set(0xa9e0, 0xa9ff, C.SeAsian);
  set(0xaa60, 0xaa7f, C.SeAsian);
  set(0x1780, 0x17ff, C.SeAsian); // Khmer
  set(0x19e0, 0x19ff, C.SeAsian);
  set(0x1900, 0x1aaf, C.SeAsian); // Limbu, Tai Le, New Tai Lue, Buginese, Tai Tham
  set(0x1b00, 0x1bff, C.SeAsian); // Balinese, Sundanese, Batak
  set(0x10a0, 0x10ff, C.OtherLetter); // Georgian
  set(0x2d00, 0x2d2f, C.OtherLetter);
  set(0x1c90, 0x1cbf, C.OtherLetter);
  set(0x1100, 0x11ff, C.Hangul); // jamo
  set(0x1200, 0x139f, C.OtherLetter); // Ethiopic
  set(0x2d80, 0x2ddf, C.OtherLetter);
  set(0xab00, 0xab2f, C.OtherLetter);
  set(0x13a0, 0x167f, C.OtherLetter); // Cherokee, Canadian syllabics
  set(0x1680, 0x16ff, C.OtherLetter); // Ogham, Runic
  set(0x1800, 0x18af, C.OtherLetter); // Mongolian
  set(0x1e00, 0x1eff, C.LatinExt); // Latin Extended Additional (Vietnamese)
  set(0x1ab0, 0x1aff, C.Mark);
  set(0x1dc0, 0x1dff, C.Mark);
  set(0x20d0, 0x20ff, C.Mark);
  set(0xfe20, 0xfe2f, C.Mark);
  set(0x2c60, 0x2c7f, C.LatinExt);
  set(0xa720, 0xa7ff, C.LatinExt);
  set(0xab30, 0xab6f, C.LatinExt);
  // Punctuation and spaces
  set(0x2000, 0x200a, C.Space);
  set(0x2010, 0x2027, C.OtherPunct);
  set(0x2028, 0x2029, C.Newline);
  set(0x202f, 0x202f, C.Space);
  set(0x2030, 0x205e, C.OtherPunct);
  t[0x205f] = C.Space;
  t[0x3000] = C.Space;
  set(0x3001, 0x303f, C.OtherPunct);
  set(0x3005, 0x3007, C.Han); // 々 〆 〇
  // CJK
  set(0x2e80, 0x2fdf, C.Han); // radicals
  set(0x3040, 0x309f, C.Kana);
  set(0x30a0, 0x30ff, C.Kana);
  t[0x30fb] = C.OtherPunct; // katakana middle dot
  set(0x31f0, 0x31ff, C.Kana);
  set(0x3100, 0x312f, C.Han); // Bopomofo
  set(0x31a0, 0x31bf, C.Han);
  set(0x3130, 0x318f, C.Hangul);
  set(0x3400, 0x4dbf, C.Han);
  set(0x4e00, 0x9fff, C.Han);
  set(0xf900, 0xfaff, C.Han);
  set(0xa960, 0xa97f, C.Hangul);
  set(0xac00, 0xd7ff, C.Hangul);
  set(0xfe30, 0xfe4f, C.OtherPunct); // CJK compatibility forms
  set(0xfe50, 0xfe6f, C.OtherPunct); // small forms
  set(0xff01, 0xff0f, C.OtherPunct); // fullwidth punctuation
  set(0xff10, 0xff19, C.Han); // fullwidth digits behave like CJK characters in every tokenizer here
  set(0xff1a, 0xff20, C.OtherPunct);
  set(0xff21, 0xff3a, C.Han);
  set(0xff3b, 0xff40, C.OtherPunct);
  set(0xff41, 0xff5a, C.Han);
  set(0xff5b, 0xff65, C.OtherPunct);
  set(0xff66, 0xff9f, C.Kana); // halfwidth katakana
  set(0xffa0, 0xffdc, C.Hangul);
  // Emoji-ish in the BMP: misc symbols and dingbats (many are emoji), ZWJ, variation selectors, keycap.
  set(0x2600, 0x27bf, C.Emoji);
  set(0x2b00, 0x2bff, C.Emoji);
  t[0x200d] = C.Emoji; // ZWJ
  set(0xfe00, 0xfe0f, C.Emoji); // variation selectors
  t[0x20e3] = C.Emoji; // combining enclosing keycap
  t[0x200b] = C.Emoji; // zero-width space: invisible, but costs bytes like ZWJ
  t[0x200c] = C.Emoji;
  t[0x200e] = C.Emoji; // LRM / RLM
  t[0x200f] = C.Emoji;
  t[0xfeff] = C.Emoji; // BOM
  return t;
})();

/** Class of an astral code point (above U+FFFF). */
function astralClass(cp: number): C {
  if (cp >= 0x1f000 && cp <= 0x1faff) return C.Emoji; // mahjong … symbols & pictographs extended-A
  if (cp >= 0xe0000 && cp <= 0xe007f) return C.Emoji; // tags (subdivision flags)
  if (cp >= 0x20000 && cp <= 0x3ffff) return C.Han; // CJK extensions B–H, compatibility supplement
  if (cp >= 0x1d400 && cp <= 0x1d7ff) return C.Symbol; // mathematical alphanumerics
  return C.Symbol;
}

function utf8Bytes(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** True for ASCII [A-Za-z0-9+/=], the alphabet of base64 and hex runs. */
function isB64(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2b ||
    code === 0x2f ||
    code === 0x3d
  );
}

function isAsciiAlnum(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39);
}

/** Characters that end a URL: whitespace, quotes, brackets, and anything outside printable ASCII except %-free text. */
function endsUrl(code: number): boolean {
  return (
    code <= 0x20 ||
    code === 0x22 ||
    code === 0x27 ||
    code === 0x3c ||
    code === 0x3e ||
    code === 0x28 ||
    code === 0x29 ||
    code === 0x5b ||
    code === 0x5d ||
    code === 0x7b ||
    code === 0x7d ||
    code === 0x60 ||
    code >= 0x7f
  );
}

/** 30-bit FNV-1a step over one UTF-16 code unit (30 bits keep the key a small integer in V8). */
function fnvStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, 16777619) & 0x3fffffff;
}
const FNV_OFFSET = 2166136261 & 0x3fffffff;

/** {@link COMMON_WORDS} by hash, so a word is looked up without cutting it out of the text. */
const COMMON_BY_HASH: ReadonlyMap<number, readonly string[]> = (() => {
  const map = new Map<number, string[]>();
  for (const word of COMMON_WORDS) {
    let h = FNV_OFFSET;
    for (let i = 0; i < word.length; i++) h = fnvStep(h, word.charCodeAt(i));
    const list = map.get(h);
    if (list) list.push(word);
    else map.set(h, [word]);
  }
  return map;
})();

/** True when text[start, start + length) is a common word with hash `hash`. */
function isCommonWord(text: string, start: number, length: number, hash: number): boolean {
  const candidates = COMMON_BY_HASH.get(hash);
  if (!candidates) return false;
  for (const word of candidates) if (word.length === length && text.startsWith(word, start)) return true;
  return false;
}

/** Minimum length of a base64/hex-like run, in characters. */
const B64_MIN_RUN = 16;
/** A digit run this long or longer counts as {@link Feature.LongDigit}. */
const LONG_DIGIT_RUN = 7;

/** Length of a URL starting at `i` (`http://`, `https://`, `www.`), or 0. */
function urlLengthAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  let start = false;
  if (c === 0x68 /* h */) start = text.startsWith('http://', i) || text.startsWith('https://', i);
  else if (c === 0x77 /* w */) start = text.startsWith('www.', i);
  if (!start) return 0;
  let j = i;
  while (j < text.length && !endsUrl(text.charCodeAt(j))) j++;
  featureWork.lookAheadUnits += j - i;
  // Trailing sentence punctuation is not part of the URL.
  while (j > i) {
    const last = text.charCodeAt(j - 1);
    if (last === 0x2e || last === 0x2c || last === 0x3b || last === 0x3a || last === 0x21 || last === 0x3f) j--;
    else break;
  }
  return j - i;
}

/**
 * Length of a base64/hex-like run starting at `i`, or 0 when the run there is ordinary text: the run of
 * [A-Za-z0-9+/=] from `i` to its end qualifies when it is at least {@link B64_MIN_RUN} long and mixes
 * digits into letters or switches case often.
 *
 * A rejected run can hold many word starts (`a/a/a/…`), each asking about the suffix from there to the
 * same end. Scanning each suffix again made such text quadratic in its length, so the first scan of a run keeps prefix sums and every later question
 * about a suffix of it is answered in O(1), with the same figures as a fresh scan.
 */
/** Work of {@link addScriptFeatures} since the process started (cumulative). */
export interface ScriptFeatureWork {
  /** Code units of the texts read by the main pass. */
  codeUnits: number;
  /** Code units read ahead by the URL and base64 checks; at most `codeUnits` (each run is scanned once). */
  lookAheadUnits: number;
}

const featureWork: ScriptFeatureWork = { codeUnits: 0, lookAheadUnits: 0 };

/** A copy of the cumulative work counters of {@link addScriptFeatures}. */
export function scriptFeatureWork(): ScriptFeatureWork {
  return { ...featureWork };
}

class Base64Runs {
  private start = -1;
  private end = -1;
  private digitsBefore = new Int32Array(0);
  private lettersBefore = new Int32Array(0);
  /** Case switches at positions before m (a letter whose case differs from the previous letter's). */
  private switchesBefore = new Int32Array(0);
  /** Index of the first letter at or after m (or the run's end). */
  private firstLetterFrom = new Int32Array(0);

  private text = '';

  /** Starts on a new text (forgets the cached run). */
  reset(text: string): void {
    this.text = text;
    this.start = -1;
    this.end = -1;
  }

  lengthAt(i: number): number {
    if (i < this.start || i >= this.end) this.scan(i);
    const len = this.end - i;
    if (len < B64_MIN_RUN) return 0;
    const a = i - this.start;
    const z = this.end - this.start;
    const digits = this.digitsBefore[z] - this.digitsBefore[a];
    const letters = this.lettersBefore[z] - this.lettersBefore[a];
    const first = this.firstLetterFrom[a];
    // The suffix's first letter has no earlier letter inside the suffix, so it is never a switch there.
    const caseSwitches = first >= z ? 0 : this.switchesBefore[z] - this.switchesBefore[first + 1];
    if ((digits >= 2 && letters >= 2) || caseSwitches * 4 >= len) return len;
    return 0;
  }

  private scan(i: number): void {
    const text = this.text;
    let j = i;
    while (j < text.length && isB64(text.charCodeAt(j))) j++;
    featureWork.lookAheadUnits += j - i;
    this.start = i;
    this.end = j;
    const size = j - i + 1;
    if (this.digitsBefore.length < size) {
      const cap = Math.max(size, 2 * this.digitsBefore.length, 64);
      this.digitsBefore = new Int32Array(cap);
      this.lettersBefore = new Int32Array(cap);
      this.switchesBefore = new Int32Array(cap);
      this.firstLetterFrom = new Int32Array(cap);
    }
    let digits = 0;
    let letters = 0;
    let switches = 0;
    let lastUpper = -1;
    for (let m = 0; m < size - 1; m++) {
      this.digitsBefore[m] = digits;
      this.lettersBefore[m] = letters;
      this.switchesBefore[m] = switches;
      const code = text.charCodeAt(i + m);
      if (code >= 0x30 && code <= 0x39) digits++;
      else if (code >= 0x41 && code <= 0x5a) {
        letters++;
        if (lastUpper === 0) switches++;
        lastUpper = 1;
      } else if (code >= 0x61 && code <= 0x7a) {
        letters++;
        if (lastUpper === 1) switches++;
        lastUpper = 0;
      }
    }
    this.digitsBefore[size - 1] = digits;
    this.lettersBefore[size - 1] = letters;
    this.switchesBefore[size - 1] = switches;
    let next = size - 1;
    this.firstLetterFrom[size - 1] = next;
    for (let m = size - 2; m >= 0; m--) {
      const code = text.charCodeAt(i + m);
      if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) next = m;
      this.firstLetterFrom[m] = next;
    }
  }
}

/** One per process: addScriptFeatures is synchronous, so the cached run never outlives its text's pass. */
const base64Runs = new Base64Runs();

/**
 * Adds the features of `text` into `out` (length {@link FEATURE_COUNT}), so callers can reuse one array.
 * Units: see {@link Feature}. Never throws; lone surrogates count as symbols.
 */
export function addScriptFeatures(text: string, out: Float64Array): void {
  const n = text.length;
  let prev: C = C.Newline; // start of text behaves like after a line break
  let prevLetter: C = C.Symbol; // class of the last letter, for combining marks
  let digitRun = 0;
  let inSpaceRun = false;
  // The current Latin word, held back until it ends so a common word can be counted as one.
  let wordStart = -1;
  let wordAsciiOnly = true;
  let wordAscii = 0;
  let wordExt = 0;
  let wordCaps = 0;
  let wordHash = FNV_OFFSET;
  const flushWord = (end: number) => {
    const length = end - wordStart;
    if (
      wordAsciiOnly &&
      length >= 2 &&
      length <= COMMON_WORD_MAX_LENGTH &&
      isCommonWord(text, wordStart, length, wordHash)
    ) {
      out[Feature.CommonWord] += 1;
    } else {
      out[Feature.AsciiLetter] += wordAscii;
      out[Feature.LatinExtLetter] += wordExt;
      out[Feature.CapsRun] += wordCaps;
      out[Feature.LatinWord] += 1;
    }
    wordStart = -1;
  };
  const base64 = base64Runs;
  base64.reset(text);
  featureWork.codeUnits += n;
  let i = 0;
  while (i < n) {
    const code = text.charCodeAt(i);
    // Pathological runs are looked for only where an ASCII word starts, so ordinary text pays one compare.
    if (wordStart < 0 && isAsciiAlnum(code) && prev !== C.Digit) {
      const url = urlLengthAt(text, i);
      const run = url > 0 ? url : base64.lengthAt(i);
      if (run > 0) {
        out[url > 0 ? Feature.UrlChar : Feature.Base64Char] += run;
        if (digitRun > 0) {
          out[digitRun >= LONG_DIGIT_RUN ? Feature.LongDigit : Feature.Digit] += digitRun;
          out[Feature.DigitRun] += 1;
          digitRun = 0;
        }
        i += run;
        prev = C.AsciiPunct;
        continue;
      }
    }
    let cls: C;
    let cp = code;
    let units = 1;
    if (code < 0xd800 || code > 0xdfff) {
      cls = BMP[code] as C;
    } else if (code <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        units = 2;
        cls = astralClass(cp);
      } else cls = C.Symbol;
    } else cls = C.Symbol;

    if (cls !== C.Space) inSpaceRun = false;
    if (cls === C.AsciiLower || cls === C.AsciiUpper || cls === C.LatinExt) {
      if (wordStart < 0) {
        wordStart = i;
        wordAsciiOnly = true;
        wordAscii = 0;
        wordExt = 0;
        wordCaps = 0;
        wordHash = FNV_OFFSET;
      }
      if (cls === C.LatinExt) {
        wordExt++;
        wordAsciiOnly = false;
      } else {
        wordAscii++;
        wordHash = fnvStep(wordHash, code);
        if (cls === C.AsciiUpper && prev === C.AsciiUpper) wordCaps++;
      }
      if (digitRun > 0) {
        out[digitRun >= LONG_DIGIT_RUN ? Feature.LongDigit : Feature.Digit] += digitRun;
        out[Feature.DigitRun] += 1;
        digitRun = 0;
      }
      prevLetter = cls;
      prev = cls;
      i += units;
      continue;
    }
    if (cls === C.Mark) {
      // A combining mark costs like a letter of the script it attaches to (Vietnamese, Hebrew points …);
      // inside a Latin word it is an accent, which costs like a non-ASCII Latin letter.
      if (wordStart >= 0) {
        wordExt++;
        wordAsciiOnly = false;
      } else {
        const lf = LETTER_FEATURE[prevLetter];
        if (lf >= 0) out[lf] += 1;
        else out[Feature.SymbolBytes] += utf8Bytes(cp);
      }
      // keep `prev` so the mark does not split the word
      i += units;
      continue;
    }
    if (wordStart >= 0) flushWord(i);

    if (digitRun > 0 && cls !== C.Digit) {
      out[digitRun >= LONG_DIGIT_RUN ? Feature.LongDigit : Feature.Digit] += digitRun;
      out[Feature.DigitRun] += 1;
      digitRun = 0;
    }

    switch (cls) {
      case C.Space:
        if (prev === C.Space || prev === C.Newline) {
          out[Feature.ExtraSpace] += 1;
          if (prev === C.Space && !inSpaceRun) {
            out[Feature.SpaceRun] += 1;
            inSpaceRun = true;
          }
        } else out[Feature.Space] += 1;
        break;
      case C.Newline:
        out[Feature.Newline] += 1;
        break;
      case C.Digit:
        digitRun++;
        break;
      case C.AsciiPunct:
        out[Feature.AsciiPunct] += 1;
        break;
      case C.OtherPunct:
        out[Feature.OtherPunct] += 1;
        break;
      case C.Emoji:
        out[Feature.EmojiBytes] += utf8Bytes(cp);
        break;
      case C.Symbol:
        out[Feature.SymbolBytes] += utf8Bytes(cp);
        break;
      default: {
        out[LETTER_FEATURE[cls]] += 1;
        const wf = WORD_FEATURE[cls];
        if (wf >= 0 && WORD_FEATURE[prev] !== wf) out[wf] += 1;
        prevLetter = cls;
      }
    }
    prev = cls;
    i += units;
  }
  if (wordStart >= 0) flushWord(n);
  if (digitRun > 0) {
    out[digitRun >= LONG_DIGIT_RUN ? Feature.LongDigit : Feature.Digit] += digitRun;
    out[Feature.DigitRun] += 1;
  }
}

/** The features of `text` as a new vector (length {@link FEATURE_COUNT}). */
export function scriptFeatures(text: string): Float64Array {
  const out = new Float64Array(FEATURE_COUNT);
  addScriptFeatures(text, out);
  return out;
}
