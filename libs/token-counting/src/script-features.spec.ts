import { Feature, FEATURE_COUNT, FEATURE_NAMES, scriptFeatures, scriptFeatureWork } from './script-features';

/** The non-zero features of a text, by name. */
function named(text: string): Record<string, number> {
  const f = scriptFeatures(text);
  const out: Record<string, number> = {};
  FEATURE_NAMES.forEach((name, i) => {
    if (f[i] !== 0) out[name] = f[i];
  });
  return out;
}

describe(scriptFeatures.name, () => {
  it('has one name per feature', () => {
    expect(FEATURE_NAMES).toHaveLength(FEATURE_COUNT);
    expect(FEATURE_NAMES[Feature.Base64Char]).toBe('base64Char');
  });

  it('counts Latin letters, words, spaces and punctuation', () => {
    expect(named('Zyx, Qwv!')).toEqual({ asciiLetter: 6, latinWord: 2, space: 1, asciiPunct: 2 });
  });

  it('counts a common word once instead of by its letters', () => {
    // "World" is one token after a space in every reference tokenizer; "Hello" is not in Mistral's.
    expect(named('Hello, World!')).toEqual({ asciiLetter: 5, latinWord: 1, commonWord: 1, space: 1, asciiPunct: 2 });
    expect(named('the')).toEqual({ commonWord: 1 });
    expect(named('thé')).toEqual({ asciiLetter: 2, latinExtLetter: 1, latinWord: 1 });
  });

  it('counts caps runs and accented letters in the same word', () => {
    expect(named('NASA café')).toEqual({ asciiLetter: 7, capsRun: 3, latinExtLetter: 1, latinWord: 2, space: 1 });
  });

  it('puts combining marks with the letter they follow', () => {
    expect(named('e\u0301')).toEqual({ asciiLetter: 1, latinExtLetter: 1, latinWord: 1 });
    expect(named('שָׁלוֹם')).toEqual({ hebrewLetter: 7, hebrewWord: 1 });
  });

  it('classifies each script', () => {
    expect(named('Привет')).toEqual({ cyrillicLetter: 6, cyrillicWord: 1 });
    expect(named('Γειά')).toEqual({ greekLetter: 4, greekWord: 1 });
    expect(named('مرحبا')).toEqual({ arabicLetter: 5, arabicWord: 1 });
    expect(named('שלום')).toEqual({ hebrewLetter: 4, hebrewWord: 1 });
    expect(named('नमस्ते')).toEqual({ devanagariLetter: 6, devanagariWord: 1 });
    expect(named('வணக்கம்')).toEqual({ indicLetter: 7, indicWord: 1 });
    expect(named('สวัสดี')).toEqual({ thaiLetter: 6 });
    expect(named('ជំរាបសួរ')).toEqual({ seAsianLetter: 8 });
    expect(named('გამარჯობა')).toEqual({ otherLetter: 9 });
    expect(named('你好，世界。')).toEqual({ han: 4, otherPunct: 2 });
    expect(named('こんにちはカタカナ')).toEqual({ kana: 9 });
    expect(named('안녕하세요')).toEqual({ hangul: 5 });
    expect(named('第３回')).toEqual({ han: 3 });
  });

  it('counts emoji and invisible joiners in UTF-8 bytes', () => {
    // 👨 (4) ZWJ (3) 👩 (4) ZWJ (3) 👧 (4)
    expect(named('👨‍👩‍👧')).toEqual({ emojiBytes: 18 });
    // ❤ U+2764 (3) + VS16 (3)
    expect(named('❤️')).toEqual({ emojiBytes: 6 });
    expect(named('🇫🇷')).toEqual({ emojiBytes: 8 });
    expect(named('→∑')).toEqual({ symbolBytes: 6 });
  });

  it('splits digit runs into short and long', () => {
    expect(named('in 2024')).toEqual({ commonWord: 1, space: 1, digit: 4, digitRun: 1 });
    expect(named('+49 1701234567')).toEqual({ asciiPunct: 1, digit: 2, longDigit: 10, digitRun: 2, space: 1 });
  });

  it('counts whitespace runs and line breaks', () => {
    expect(named('a\n    b')).toEqual({ asciiLetter: 2, latinWord: 2, newline: 1, extraSpace: 4, spaceRun: 1 });
    expect(named('a    b  c')).toEqual({ asciiLetter: 3, latinWord: 3, space: 2, extraSpace: 4, spaceRun: 2 });
    expect(named('a\tb')).toEqual({ asciiLetter: 2, latinWord: 2, space: 1 });
  });

  it('takes URLs as one class, without trailing sentence punctuation', () => {
    expect(named('see https://example.com/a?b=1.')).toEqual({
      commonWord: 1,
      space: 1,
      urlChar: 25,
      asciiPunct: 1,
    });
    expect(named('www.postgresql.org')).toEqual({ urlChar: 18 });
  });

  it('takes base64 and hex runs as one class, but not long plain words', () => {
    expect(named('aGVsbG8gd29ybGQhIEhvdyBhcmUgeW91')).toEqual({ base64Char: 32 });
    expect(named('3f786850e387550fdab836ed7e6dc881de23001b')).toEqual({ base64Char: 40 });
    expect(named('internationalization')).toEqual({ asciiLetter: 20, latinWord: 1 });
  });

  it('counts nothing for the empty string and survives lone surrogates', () => {
    expect(named('')).toEqual({});
    expect(named('\ud800x')).toEqual({ symbolBytes: 3, asciiLetter: 1, latinWord: 1 });
  });

  // Expected figures computed by the earlier implementation, which scanned the run again from every
  // word start (quadratic on `a/a/a/…`); identical on the 10,555 corpus, pathological, hostile and
  // random base64-alphabet texts compared when it was replaced.
  it.each([
    ['a/ × 4,000', 'a/'.repeat(4_000), { asciiLetter: 4_000, latinWord: 4_000, asciiPunct: 4_000 }],
    ['a case-switching run after slashes', 'Ab/cD/eF/gH/'.repeat(3), { base64Char: 36 }],
    ['a rejected run whose later suffix qualifies', 'a/a/a/a/a/a/a/a/aB1cD2', { base64Char: 22 }],
    [
      'a rejected run whose suffixes are too short',
      `${'x='.repeat(10)}Ab1`,
      { asciiLetter: 12, latinWord: 11, digit: 1, digitRun: 1, asciiPunct: 10 },
    ],
  ])('answers every word start inside one base64-alphabet run as a fresh scan would: %s', (_name, text, expected) => {
    expect(named(text)).toEqual(expected);
  });

  it.each([
    ['a/', 'a/'.repeat(20_000)],
    ['ab+', 'ab+'.repeat(20_000)],
    ['Z=', 'Z='.repeat(20_000)],
    ['http://', 'http://'.repeat(5_000)],
  ])('reads ahead at most once per character on %j runs (was once per word start)', (_unit, text) => {
    const before = scriptFeatureWork();
    scriptFeatures(text);
    const after = scriptFeatureWork();
    expect(after.codeUnits - before.codeUnits).toBe(text.length);
    expect(after.lookAheadUnits - before.lookAheadUnits).toBeLessThanOrEqual(text.length);
  });
});
