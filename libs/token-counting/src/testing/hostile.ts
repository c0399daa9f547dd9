/**
 * Test and bench support (not exported from the lib): hostile texts for the counters, runs without a
 * space in every script, built from the committed fixtures (the UDHR in 26 languages with its spaces
 * removed, or its letters alone; emoji sequences of Unicode's emoji test file) and from repeated or
 * seeded-random units. Each is one long pre-token (or a few) for every tokenizer here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '@ask/testing';
import { emojiSequences, fixtureDataDir, udhrKeys } from './corpus';

/** Repeated units: letters, marks, CJK, kana, Hangul, Thai, Indic, RTL, emoji, flags, ZWJ families, punctuation, whitespace, digits. */
export const HOSTILE_UNITS: readonly string[] = [
  'a',
  'ab',
  'aA',
  'Ab',
  'é',
  'e\u0301',
  '规',
  '你好',
  'あ',
  'ア',
  '한',
  'ก',
  'я',
  'ع',
  'ה',
  'ह',
  'हि',
  'க',
  'ა',
  'ሀ',
  '🧪',
  '👍🏽',
  '👨‍👩‍👧',
  '🇫🇷',
  '❤️',
  '!',
  '!?',
  '.',
  '-',
  '=',
  '/',
  '_',
  ' ',
  '\n',
  ' \n',
  '\t',
  '1',
  '12',
  'x1',
  'Z=',
];

/**
 * `[name, text]` pairs of about `length` code points each: every {@link HOSTILE_UNITS} repeated,
 * `perLanguage` seeded windows per UDHR language with its whitespace removed and as many of its letters only, seeded
 * random ASCII letters, mixed case, punctuation, and emoji sequences. Deterministic (seed 7).
 */
export function hostileRuns(
  length: number,
  dataDir: string = fixtureDataDir(),
  perLanguage = 2,
): Array<[string, string]> {
  const random = seededRandom(7);
  const out: Array<[string, string]> = [];
  const repeat = (unit: string) => {
    const cps = Array.from(unit);
    return Array.from({ length }, (_, i) => cps[i % cps.length]).join('');
  };
  for (const unit of HOSTILE_UNITS) out.push([`repeat ${JSON.stringify(unit)}`, repeat(unit)]);
  for (const key of udhrKeys(dataDir)) {
    const text = readFileSync(join(dataDir, 'text-udhr', `udhr_${key}.txt`), 'utf8');
    const noSpace = Array.from(text.replace(/\s+/gu, ''));
    const letters = Array.from(text).filter((c) => /[\p{L}\p{M}]/u.test(c));
    for (let k = 0; k < perLanguage; k++) {
      const a = Math.floor(random() * Math.max(1, noSpace.length - length));
      out.push([`udhr ${key} without spaces @${a}`, noSpace.slice(a, a + length).join('')]);
      const b = Math.floor(random() * Math.max(1, letters.length - length));
      out.push([`udhr ${key} letters only @${b}`, letters.slice(b, b + length).join('')]);
    }
  }
  const pick = (alphabet: readonly string[]) =>
    Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const emoji = emojiSequences(dataDir);
  for (let k = 0; k < 4; k++) {
    out.push([`random ascii letters #${k}`, pick([...'abcdefghijklmnopqrstuvwxyz'])]);
    out.push([`random mixed case #${k}`, pick([...'aAbBcCxyZ'])]);
    out.push([`random punctuation #${k}`, pick([...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'])]);
    out.push([`random emoji #${k}`, pick(emoji).slice(0, 2 * length)]);
  }
  return out;
}
