import { tiktokenCounter, type BpeWork } from '@ask/token-counting';
import { chunkDocument, documentSections, SECTION_CHARS } from './chunk-document';

/**
 * Hostile knowledge documents (issue 10): one long run, two long words, base64, CJK. Each is chunked
 * into exact figures, and the counting work is linear in the document: the splitter re-measures pieces,
 * but the counter reads at most 3 code units per document code unit here, with at most 3 rank
 * look-ups per UTF-8 byte (never a time: bench/hostile has the times).
 */
describe(`${chunkDocument.name} on hostile documents`, () => {
  const o200k = tiktokenCounter('o200k_base');
  const base64 = Buffer.from(Array.from({ length: 75_000 }, (_, i) => (i * 7919) % 251)).toString('base64');

  it.each([
    {
      name: '"a" × 6,000 + " " + "b" × 6,000 (12 KB; froze the gateway 13 s): 36 chunks, 2,634 tokens',
      text: `${'a'.repeat(6_000)} ${'b'.repeat(6_000)}`,
      chunks: 36,
      tokens: 2_634,
    },
    {
      name: '"a" × 200,000 (one run, 4 sections): 589 chunks, 29,388 tokens',
      text: 'a'.repeat(200_000),
      chunks: 589,
      tokens: 29_388,
    },
    {
      name: '100,000 characters of base64 (2 sections): 295 chunks, 80,293 tokens',
      text: base64,
      chunks: 295,
      tokens: 80_293,
    },
    {
      name: '100,000 × 规 (2 sections): 295 chunks, 117,580 tokens',
      text: '规'.repeat(100_000),
      chunks: 295,
      tokens: 117_580,
    },
  ])('$name; counting work linear in the document', async ({ text, chunks, tokens }) => {
    const before: BpeWork = o200k.work();
    const result = await chunkDocument(text);
    const after = o200k.work();
    expect(result).toHaveLength(chunks);
    expect(result.reduce((sum, c) => sum + c.tokenCount, 0)).toBe(tokens);
    const codeUnits = after.codeUnits - before.codeUnits;
    const bytes = after.bytes - before.bytes;
    const pretokens = after.pretokens - before.pretokens;
    // The splitter measures each piece too long for a chunk, then its parts at the next separator, then
    // the chunks: here every code unit is read at most 3 times (the two-word document: 2.2 times).
    expect(codeUnits).toBeLessThanOrEqual(3 * text.length);
    expect(after.merges - before.merges).toBeLessThanOrEqual(bytes - pretokens);
    expect(after.rankLookups - before.rankLookups).toBeLessThanOrEqual(pretokens + 3 * bytes);
  });

  it('cuts a 1 MB single run and a 2 MB two-word document into sections of at most 65,536 characters that join back to the text', () => {
    const run = 'a'.repeat(1_000_000);
    const two = `${'a'.repeat(999_999)} ${'b'.repeat(1_000_000)}`;
    for (const [text, sections] of [
      [run, 16],
      [two, 31],
    ] as const) {
      const cut = documentSections(text);
      expect(cut).toHaveLength(sections);
      expect(cut.join('')).toBe(text);
      expect(Math.max(...cut.map((s) => s.length))).toBe(SECTION_CHARS);
    }
  });

  it('cuts at the strongest separator in the second half of the window, never inside a surrogate pair', () => {
    const text = `${'x'.repeat(40_000)}\n\n${'y'.repeat(40_000)} ${'z'.repeat(40_000)}`;
    expect(documentSections(text).map((s) => s.length)).toEqual([40_000, 40_002, 40_001]);
    const emoji = `x${'🧪'.repeat(40_000)}`; // 80,001 UTF-16 code units, no separator; 65,535 is a high surrogate
    const cut = documentSections(emoji);
    expect(cut.map((s) => s.length)).toEqual([65_535, 14_466]);
    expect(cut[1]).toBe('🧪'.repeat(7_233));
  });

  it('returns to the event loop while it chunks a 1 MB single run (at least once per 4,096 characters measured)', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const chunks = await chunkDocument('a'.repeat(1_000_000));
    ticking = false;
    expect(chunks).toHaveLength(2_945);
    expect(turns).toBeGreaterThanOrEqual(Math.floor(1_000_000 / 4_096));
  });
});
