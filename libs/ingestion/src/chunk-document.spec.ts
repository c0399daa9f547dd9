import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { chunkDocument, MARKDOWN_SEPARATORS } from './chunk-document';
import { countTokens } from './token-length';

/** pgvector's README and CHANGELOG, committed unchanged (source and licence: fixtures/data/README.md). */
const KB = resolve(__dirname, '..', '..', '..', 'fixtures', 'data', 'kb-pgvector');
const readme = readFileSync(`${KB}/README.md`, 'utf8');
const changelog = readFileSync(`${KB}/CHANGELOG.md`, 'utf8');

describe('chunk-document', () => {
  describe(chunkDocument.name, () => {
    it('splits the pgvector README into 46 chunks of at most 400 tokens (exact, o200k_base)', async () => {
      const chunks = await chunkDocument(readme);
      expect(chunks).toHaveLength(46);
      expect(Math.max(...chunks.map((c) => c.tokenCount))).toBeLessThanOrEqual(400);
      for (const c of chunks) expect(c.tokenCount).toBe(countTokens(c.text));
    });

    it('splits the pgvector CHANGELOG into 7 chunks', async () => {
      expect(await chunkDocument(changelog)).toHaveLength(7);
    });

    it('starts chunks at Markdown headings', async () => {
      const chunks = await chunkDocument(readme);
      expect(chunks[0].text.startsWith('# pgvector')).toBe(true);
      expect(chunks.filter((c) => /^#{2,6} /.test(c.text)).length).toBeGreaterThan(30);
    });

    it('overlaps consecutive chunks cut inside one section by up to the overlap', async () => {
      const words = Array.from({ length: 900 }, (_, i) => `w${i}`).join(' ');
      const chunks = await chunkDocument(words, { chunkTokens: 100, overlapTokens: 20 });
      for (let i = 1; i < chunks.length; i++) {
        const previousTail = chunks[i - 1].text.split(' ').slice(-3).join(' ');
        expect(chunks[i].text).toContain(previousTail);
      }
      for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(100);
    });

    it('gives each chunk of the pgvector README the trail of headings it starts under', async () => {
      const sections = (await chunkDocument(readme)).map((c) => c.section);
      expect(sections.slice(0, 8)).toEqual([
        'pgvector',
        'pgvector > Installation',
        'pgvector > Getting Started',
        'pgvector > Storing',
        'pgvector > Querying',
        'pgvector > Indexing',
        'pgvector > HNSW',
        'pgvector > HNSW > Index Options',
      ]);
      expect(new Set(sections).size).toBe(39);
    });

    it('gives the same chunks for the same text', async () => {
      expect(await chunkDocument(changelog)).toEqual(await chunkDocument(changelog));
    });

    it('returns no chunks for whitespace-only text and one for a short text', async () => {
      expect(await chunkDocument(' \n\t ')).toEqual([]);
      expect(await chunkDocument('Short note.')).toEqual([{ text: 'Short note.', tokenCount: 3, section: null }]);
    });

    it('rejects an overlap not smaller than the chunk', async () => {
      await expect(chunkDocument('x', { chunkTokens: 50, overlapTokens: 50 })).rejects.toThrow(RangeError);
      await expect(chunkDocument('x', { chunkTokens: 0 })).rejects.toThrow(RangeError);
    });
  });

  describe('MARKDOWN_SEPARATORS', () => {
    it('tries headings first and single characters last', () => {
      expect(MARKDOWN_SEPARATORS.slice(0, 3)).toEqual(['\n# ', '\n## ', '\n### ']);
      expect(MARKDOWN_SEPARATORS[MARKDOWN_SEPARATORS.length - 1]).toBe('');
    });
  });
});
