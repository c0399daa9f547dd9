/**
 * Cuts a text into pieces in which no run of one character class is longer than a bound, so that a
 * tokenizer whose cost grows faster than linearly in the length of one pre-token (one BPE "word")
 * does bounded work per character on any text.
 *
 * Classes: whitespace, letters (with combining marks), digits, and everything else (punctuation,
 * symbols, emoji). Every pre-tokenizer bundled here (tiktoken-style regexes, Llama 3, Qwen, DeepSeek,
 * GPT-OSS, Mistral, SentencePiece's whitespace handling) keeps a pre-token inside one such run plus at
 * most a one-character prefix, so a text whose runs are all within the bound is returned whole and
 * tokenizes exactly as before. Only a longer run is cut, every `maxRun` code points from its start,
 * never inside a surrogate pair and, where possible, not inside a grapheme: not before a combining
 * mark, variation selector, skin-tone modifier, tag or ZWJ, not after a ZWJ, not between the two
 * regional indicators of a flag. A run of nothing but extenders is cut anyway after
 * `maxRun + GRAPHEME_SLACK` code points, so the bound holds for every text.
 */

/** Code points past `maxRun` a cut may be delayed to land on a grapheme boundary. */
export const GRAPHEME_SLACK = 32;

/** What {@link boundedPieces} did. */
export interface PieceCut {
  /** The pieces, in order; joined they are the text. One piece (the text itself) when nothing was cut. */
  pieces: string[];
  /** Longest run of one class inside any piece, in code points (≤ maxRun + GRAPHEME_SLACK). */
  longestRun: number;
}

const enum Cls {
  Space,
  Letter,
  Digit,
  Other,
}

const markPattern = /\p{M}/u;

/** Marks, ZWJ, variation selectors, skin-tone modifiers, tag characters: they continue the grapheme before them. */
function isExtender(cp: number): boolean {
  return (
    cp === 0x200d ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0x1f3fb && cp <= 0x1f3ff) ||
    (cp >= 0xe0020 && cp <= 0xe007f) ||
    markPattern.test(String.fromCodePoint(cp))
  );
}

let bmp: Uint8Array | undefined;

/** Set in the BMP table for {@link isExtender} code points. */
const EXTENDER = 8;

/** Class of every BMP code point (| {@link EXTENDER}), computed once (65,536 regex tests, at first use). */
function bmpTable(): Uint8Array {
  if (bmp) return bmp;
  const t = new Uint8Array(0x10000);
  const space = /\s/u;
  const letter = /[\p{L}\p{M}]/u;
  const digit = /\p{N}/u;
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) {
      t[c] = Cls.Other;
      continue;
    }
    const ch = String.fromCharCode(c);
    t[c] = space.test(ch) ? Cls.Space : letter.test(ch) ? Cls.Letter : digit.test(ch) ? Cls.Digit : Cls.Other;
    if (isExtender(c)) t[c] |= EXTENDER;
  }
  bmp = t;
  return t;
}

const astralLetter = /[\p{L}\p{M}]/u;
const astralDigit = /\p{N}/u;

function astralClass(cp: number): Cls {
  const ch = String.fromCodePoint(cp);
  return astralLetter.test(ch) ? Cls.Letter : astralDigit.test(ch) ? Cls.Digit : Cls.Other;
}

function isRegionalIndicator(cp: number): boolean {
  return cp >= 0x1f1e6 && cp <= 0x1f1ff;
}

/**
 * Cuts `text` so that no run of one class in a piece exceeds `maxRun` code points (plus at most
 * {@link GRAPHEME_SLACK} to reach a grapheme boundary). Linear in the text's length.
 * @throws RangeError unless maxRun is a positive integer.
 */
export function boundedPieces(text: string, maxRun: number): PieceCut {
  if (!Number.isInteger(maxRun) || maxRun < 1) throw new RangeError(`maxRun must be a positive integer, got ${maxRun}`);
  const table = bmpTable();
  const pieces: string[] = [];
  let pieceStart = 0;
  let runClass = -1;
  let run = 0;
  let longestRun = 0;
  let afterZwj = false;
  let regionalRun = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    let cp = text.charCodeAt(i);
    let units = 1;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = (cp - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        units = 2;
      }
    }
    const entry = cp < 0x10000 ? table[cp] : astralClass(cp) | (isExtender(cp) ? EXTENDER : 0);
    const extender = (entry & EXTENDER) !== 0;
    const cls = extender && runClass >= 0 ? runClass : entry & ~EXTENDER;
    if (cls !== runClass) {
      runClass = cls;
      run = 0;
    }
    const regional = isRegionalIndicator(cp);
    if (run >= maxRun) {
      const graphemeBoundary = !extender && !afterZwj && !(regional && regionalRun % 2 === 1);
      if (graphemeBoundary || run >= maxRun + GRAPHEME_SLACK) {
        pieces.push(text.slice(pieceStart, i));
        pieceStart = i;
        run = 0;
        regionalRun = 0;
      }
    }
    run++;
    if (run > longestRun) longestRun = run;
    afterZwj = cp === 0x200d;
    regionalRun = regional ? regionalRun + 1 : 0;
    i += units;
  }
  pieces.push(text.slice(pieceStart));
  return { pieces, longestRun };
}
