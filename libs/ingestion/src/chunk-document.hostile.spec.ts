import { tiktokenCounter, type BpeWork } from '@ask/token-counting';
import { chunkDocument } from './chunk-document';

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
    { name: '"a" × 6,000 + " " + "b" × 6,000 (12 KB; froze the gateway 13 s): 36 chunks, 2,634 tokens', text: `${'a'.repeat(6_000)} ${'b'.repeat(6_000)}`, chunks: 36, tokens: 2_634 },
    { name: '"a" × 200,000 (one run): 589 chunks, 29,410 tokens', text: 'a'.repeat(200_000), chunks: 589, tokens: 29_410 },
    { name: '100,000 characters of base64: 294 chunks, 80,264 tokens', text: base64, chunks: 294, tokens: 80_264 },
    { name: '100,000 × 规: 294 chunks, 117,580 tokens', text: '规'.repeat(100_000), chunks: 294, tokens: 117_580 },
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
});
