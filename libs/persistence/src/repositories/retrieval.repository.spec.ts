import { seededRandom } from '@ask/testing';
import { CredentialsCipher } from '../credentials-cipher';
import { createTestDatabase, type TestDatabase } from '../testing';
import { vectorParam } from '../vector';
import { InsightsRepository } from './insights.repository';
import { KnowledgeRepository } from './knowledge.repository';
import { ProjectsRepository } from './projects.repository';
import {
  BM25_B,
  BM25F_FIELD_WEIGHTS,
  BM25_K1,
  absentWeightOf,
  coverageDenominator,
  fullTextQuery,
  fullTextSql,
  hnswSettings,
  questionTerms,
  RetrievalRepository,
  searchSql,
  tsqueryOf,
} from './retrieval.repository';

const MODEL = 'test/fixed';

/** Deterministic pseudo-random unit vectors (the seeded PRNG), so the index test is repeatable. */
function randomUnitVectors(count: number, dimensions: number, seed: number): number[][] {
  const random = seededRandom(seed);
  const next = () => random() - 0.5;
  return Array.from({ length: count }, () => {
    const v = Array.from({ length: dimensions }, next);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

describe(RetrievalRepository.name, () => {
  let db: TestDatabase;
  let retrieval: RetrievalRepository;
  let knowledge: KnowledgeRepository;
  let insights: InsightsRepository;
  let projects: ProjectsRepository;
  let projectA: string;
  let projectB: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    retrieval = new RetrievalRepository(db.dataSource);
    knowledge = new KnowledgeRepository(db.dataSource);
    insights = new InsightsRepository(db.dataSource);
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectA = (await projects.create({ name: 'A' })).id;
    projectB = (await projects.create({ name: 'B' })).id;

    await knowledge.replaceSource(
      projectA,
      { uri: 'docs/a.md', title: 'Doc A', contentHash: 'h' },
      [
        { text: 'exact match', tokenCount: 2, embedding: [1, 0, 0] },
        { text: 'orthogonal', tokenCount: 1, embedding: [0, 1, 0] },
        { text: 'opposite', tokenCount: 1, embedding: [-1, 0, 0] },
      ],
      MODEL,
    );
    await insights.upsertInsights(
      projectA,
      [
        {
          externalId: 'i1',
          name: 'Insight one',
          description: 'Mostly aligned.',
          contentHash: 'h',
          embedding: [4, 3, 0],
        },
      ],
      MODEL,
    );
    await insights.upsertRecommendations(
      projectA,
      [{ externalId: 'r1', title: 'Rec one', body: 'Somewhat aligned.', contentHash: 'h', embedding: [3, 4, 0] }],
      MODEL,
    );
    // Project B holds the best possible match for the same query: it must never show up for A.
    await knowledge.replaceSource(
      projectB,
      { uri: 'docs/b.md', title: 'Doc B', contentHash: 'h' },
      [{ text: 'B secret', tokenCount: 2, embedding: [1, 0, 0] }],
      MODEL,
    );
    await insights.upsertInsights(
      projectB,
      [{ externalId: 'i1', name: 'B insight', description: 'B only.', contentHash: 'h', embedding: [1, 0, 0] }],
      MODEL,
    );
  });
  afterAll(() => db.drop());

  describe('search', () => {
    it('ranks insights, recommendations and chunks together by cosine similarity (score = 1 − distance)', async () => {
      const items = await retrieval.search(projectA, [1, 0, 0], 10, MODEL);
      expect(items.map((i) => [i.kind, i.title, i.text, i.source])).toEqual([
        ['knowledge', 'Doc A', 'exact match', 'docs/a.md'],
        ['insight', 'Insight one', 'Insight one\nMostly aligned.', undefined],
        ['recommendation', 'Rec one', 'Rec one\nSomewhat aligned.', undefined],
        ['knowledge', 'Doc A', 'orthogonal', 'docs/a.md'],
        ['knowledge', 'Doc A', 'opposite', 'docs/a.md'],
      ]);
      const scores = items.map((i) => i.score);
      [1, 0.8, 0.6, 0, -1].forEach((expected, i) => expect(scores[i]).toBeCloseTo(expected, 12));
    });

    it('cuts the merged ranking to top-K', async () => {
      expect((await retrieval.search(projectA, [1, 0, 0], 2, MODEL)).map((i) => i.text)).toEqual([
        'exact match',
        'Insight one\nMostly aligned.',
      ]);
    });

    it("never returns another project's rows", async () => {
      const a = await retrieval.search(projectA, [1, 0, 0], 200, MODEL);
      expect(a.map((i) => i.text).join(' ')).not.toMatch(/B secret|B only/);
      const b = await retrieval.search(projectB, [1, 0, 0], 200, MODEL);
      // Equal distances are ordered by kind, then id.
      expect(b.map((i) => i.text)).toEqual(['B insight\nB only.', 'B secret']);
    });

    it('compares only vectors of the query length', async () => {
      expect(await retrieval.search(projectA, [1, 0, 0, 0], 5, MODEL)).toEqual([]);
    });

    it('compares only vectors of the query model: rows of another model at the same length are never ranked', async () => {
      const project = (await projects.create({ name: 'Two models, one length' })).id;
      await knowledge.replaceSource(
        project,
        { uri: 'old.md', title: 'Old', contentHash: 'h' },
        [{ text: 'old model', tokenCount: 2, embedding: [1, 0, 0] }],
        'test/old',
      );
      await db.dataSource.query(`UPDATE knowledge_sources SET embedding_model = 'test/new' WHERE project_id = $1`, [
        project,
      ]);
      await knowledge.replaceSource(
        project,
        { uri: 'new.md', title: 'New', contentHash: 'h' },
        [{ text: 'new model', tokenCount: 2, embedding: [0, 1, 0] }],
        'test/new',
      );
      // Same length (3), both rows in the table: each model's query sees only its own row.
      expect((await retrieval.search(project, [1, 0, 0], 5, 'test/new')).map((i) => [i.text, i.score])).toEqual([
        ['new model', 0],
      ]);
      expect((await retrieval.search(project, [1, 0, 0], 5, 'test/old')).map((i) => [i.text, i.score])).toEqual([
        ['old model', 1],
      ]);
      expect(await retrieval.search(project, [1, 0, 0], 5, 'test/other')).toEqual([]);
    });

    it('returns nothing for an unknown or malformed project id', async () => {
      expect(await retrieval.search('00000000-0000-4000-8000-000000000000', [1, 0, 0], 5, MODEL)).toEqual([]);
      expect(await retrieval.search("x' OR 1=1 --", [1, 0, 0], 5, MODEL)).toEqual([]);
    });

    it('rejects a top-K outside 1..200', async () => {
      await expect(retrieval.search(projectA, [1, 0, 0], 0, MODEL)).rejects.toThrow(RangeError);
      await expect(retrieval.search(projectA, [1, 0, 0], 201, MODEL)).rejects.toThrow(RangeError);
      await expect(retrieval.search(projectA, [1, 0, 0], 1.5, MODEL)).rejects.toThrow(RangeError);
    });

    it('uses the partial HNSW index of the query length (EXPLAIN), and still returns exact neighbours', async () => {
      const project = (await projects.create({ name: 'Indexed' })).id;
      const vectors = randomUnitVectors(1000, 256, 42);
      for (let s = 0; s < 4; s++) {
        await knowledge.replaceSource(
          project,
          { uri: `bulk/${s}`, title: `Bulk ${s}`, contentHash: 'h' },
          vectors
            .slice(s * 250, (s + 1) * 250)
            .map((embedding, i) => ({ text: `chunk ${s * 250 + i}`, tokenCount: 2, embedding })),
          'test/random-256',
        );
      }
      await knowledge.refreshStatistics();
      const query = vectors[567];
      const plan: Array<{ 'QUERY PLAN': string }> = await db.dataSource.transaction(async (m) => {
        await m.query('SET LOCAL hnsw.iterative_scan = strict_order');
        // At 1,000 rows an exact scan and sort is still cheaper, so price sorting out: the HNSW index
        // is then the only way to get rows in distance order, and its use shows that the query's
        // expression and predicate match the partial index (a non-matching one could not be used at
        // all). With the PostgreSQL manual and kb-pgvector loaded (5,917 chunks) the planner picks it unprompted.
        await m.query('SET LOCAL enable_sort = off');
        return m.query(`EXPLAIN (COSTS OFF) ${searchSql(256)}`, [project, vectorParam(query), 8, 'test/random-256']);
      });
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toContain('Index Scan using knowledge_chunks_embedding_256_hnsw_idx on knowledge_chunks k');
      expect(text).toContain('Order By: ((embedding)::vector(256) <=>');
      const items = await retrieval.search(project, query, 8, 'test/random-256');
      expect(items[0].text).toBe('chunk 567');
      expect(items[0].score).toBeCloseTo(1, 6);
      // The statement search() runs for a project of at most EXACT_SCAN_MAX_ROWS rows can use no HNSW
      // index even with sorting priced out: its rows are read (here, where the table is this project's, by a
      // sequential scan; among many projects through the project_id index) and ranked exactly.
      const exactPlan: Array<{ 'QUERY PLAN': string }> = await db.dataSource.transaction(async (m) => {
        await m.query('SET LOCAL enable_sort = off');
        return m.query(`EXPLAIN (COSTS OFF) ${searchSql(256, 'exact')}`, [
          project,
          vectorParam(query),
          8,
          'test/random-256',
        ]);
      });
      const exactText = exactPlan.map((r) => r['QUERY PLAN']).join('\n');
      expect(exactText).not.toContain('hnsw');
      expect(exactText).toMatch(/Scan on knowledge_chunks k\n/);
    }, 60_000);

    it("ranks a small project exactly without reading its rows' embeddings out of line (TOAST)", async () => {
      // Rows past PostgreSQL's 2 KB TOAST threshold with the embedding their largest value, like the
      // PostgreSQL manual's chunks (text ~720 bytes compressed, tsv ~1 KB, a 256-dimension embedding of
      // 1,028 bytes). With pgvector's default storage (EXTERNAL) every embedding went out of line, and
      // the exact scan fetched each through the TOAST index: 284 blocks for these 120 rows (migration
      // EmbeddingsInline1796015481600).
      const project = (await projects.create({ name: 'Prose' })).id;
      const random = seededRandom(7);
      const letter = () => String.fromCharCode(97 + Math.floor(random() * 26));
      const words = Array.from({ length: 40 }, () =>
        Array.from({ length: 3 + Math.floor(random() * 7) }, letter).join(''),
      );
      const prose = () => Array.from({ length: 250 }, () => words[Math.floor(random() * words.length)]).join(' ');
      const vectors = randomUnitVectors(120, 256, 11);
      await knowledge.replaceSource(
        project,
        { uri: 'prose.md', title: 'Prose', contentHash: 'h' },
        vectors.map((embedding, i) => ({ text: `${i} ${prose()}`, tokenCount: 250, embedding })),
        'test/prose-256',
      );
      const [{ 'QUERY PLAN': explained }] = await db.dataSource.query(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${searchSql(256, 'exact')}`,
        [project, vectorParam(vectors[3]), 8, 'test/prose-256'],
      );
      const plan = explained[0].Plan;
      // An embedding read out of line costs a TOAST index block and a TOAST heap block: a plan reading
      // fewer blocks than the project has rows read none (the heap and index blocks only).
      expect(plan['Actual Rows']).toBe(8);
      expect(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']).toBeLessThan(120);
      const items = await retrieval.search(project, vectors[3], 8, 'test/prose-256');
      expect(items[0].text.startsWith('3 ')).toBe(true);
      expect(items[0].score).toBeCloseTo(1, 6);
    });
  });

  describe('searchFullText', () => {
    it('finds the rows whose words match, best BM25 first, with their cosine score, and only of this project', async () => {
      const items = await retrieval.searchFullText(projectA, 'Which one is the exact match?', [1, 0, 0], 10, MODEL);
      expect(items.map((i) => [i.kind, i.text, i.legs?.fulltext?.rank])).toEqual([
        ['knowledge', 'exact match', 1],
        ['insight', 'Insight one\nMostly aligned.', 2],
        ['recommendation', 'Rec one\nSomewhat aligned.', 3],
      ]);
      expect(items[0].score).toBeCloseTo(1, 12);
      expect(items[0].legs?.fulltext?.score).toBeGreaterThan(0);
      const b = await retrieval.searchFullText(projectB, 'exact match secret', [1, 0, 0], 10, MODEL);
      expect(b.map((i) => i.text)).toEqual(['B secret']);
    });

    it('scores Okapi BM25 from the term statistics: rarity per project, length against the mean, coverage of the question', async () => {
      const project = (await projects.create({ name: 'BM25' })).id;
      const texts = ['vacuum vacuum storage', 'vacuum index index index index', 'index', 'storage index plan'];
      await knowledge.replaceSource(
        project,
        { uri: 'b.md', title: 'B', contentHash: 'h' },
        texts.map((text) => ({ text, tokenCount: 3, embedding: [1, 0, 0] })),
        MODEL,
      );
      // Independent of the SQL: N = 4 rows, distinct lexemes 2 + 2 + 1 + 3 = 8 plus the page title's
      // 'b' in each (12, avgdl 3); df vacuum 2, index 3, storage 2, plan 1; 'photosynthesis' is in no row (df 0).
      const idf = (df: number) => Math.log(1 + (4 - df + 0.5) / (df + 0.5));
      const part = (tf: number, dl: number) => (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / 3));
      const question = 'vacuum index photosynthesis';
      const terms = await questionTerms(db.dataSource, project, question);
      expect(terms.lexemes).toEqual(['index', 'photosynthesis', 'vacuum']);
      expect(terms.idf.map((x) => x.toFixed(6))).toEqual([idf(3), idf(0), idf(2)].map((x) => x.toFixed(6)));
      expect(terms.averageLength).toBe(3);
      const items = await retrieval.searchFullText(project, question, [1, 0, 0], 10, MODEL);
      const total = idf(3) + idf(0) + idf(2);
      expect(
        items.map((i) => [i.text, i.legs?.fulltext?.score.toFixed(6), i.legs?.fulltext?.coverage?.toFixed(6)]),
      ).toEqual([
        [
          'vacuum index index index index',
          (idf(2) * part(1, 3) + idf(3) * part(4, 3)).toFixed(6),
          ((idf(2) + idf(3)) / total).toFixed(6),
        ],
        ['vacuum vacuum storage', (idf(2) * part(2, 3)).toFixed(6), (idf(2) / total).toFixed(6)],
        ['index', (idf(3) * part(1, 2)).toFixed(6), (idf(3) / total).toFixed(6)],
        ['storage index plan', (idf(3) * part(1, 4)).toFixed(6), (idf(3) / total).toFixed(6)],
      ]);
    });

    it("counts a question lexeme no row holds its embedder's absent weight times in the coverage's denominator", async () => {
      const project = (await projects.create({ name: 'absent' })).id;
      const lexical = 'local/local-lexical-v1';
      await knowledge.replaceSource(
        project,
        { uri: 'b.md', title: 'B', contentHash: 'h' },
        ['vacuum vacuum storage', 'vacuum index index index index', 'index', 'storage index plan'].map((text) => ({
          text,
          tokenCount: 3,
          embedding: [1, 0, 0],
        })),
        lexical,
      );
      // As above: df index 3, photosynthesis 0 (no row), vacuum 2 of N = 4 rows.
      const idf = (df: number) => Math.log(1 + (4 - df + 0.5) / (df + 0.5));
      const question = 'vacuum index photosynthesis';
      const terms = await questionTerms(db.dataSource, project, question);
      expect(terms.absent).toEqual([false, true, false]);
      expect(absentWeightOf(lexical)).toBe(2);
      expect(absentWeightOf('local/use-lite-512')).toBe(2);
      expect(absentWeightOf(MODEL)).toBe(1);
      expect(coverageDenominator(terms, 2).toFixed(6)).toBe((idf(3) + 2 * idf(0) + idf(2)).toFixed(6));
      expect(() => coverageDenominator(terms, 0.5)).toThrow(RangeError);
      const items = await retrieval.searchFullText(project, question, [1, 0, 0], 10, lexical);
      const denominator = idf(3) + 2 * idf(0) + idf(2);
      expect(items.map((i) => [i.text, i.legs?.fulltext?.coverage?.toFixed(6)])).toEqual([
        ['vacuum index index index index', ((idf(2) + idf(3)) / denominator).toFixed(6)],
        ['vacuum vacuum storage', (idf(2) / denominator).toFixed(6)],
        ['index', (idf(3) / denominator).toFixed(6)],
        ['storage index plan', (idf(3) / denominator).toFixed(6)],
      ]);
    });

    it("scores BM25F: a position counts its field's weight (page title, section path, text), a lexeme in any field covers the question", async () => {
      const project = (await projects.create({ name: 'BM25F' })).id;
      await knowledge.replaceSource(
        project,
        { uri: 'storage.md', title: 'Storage', contentHash: 'h' },
        [
          {
            text: 'blocks expire after a while',
            tokenCount: 5,
            section: 'Storage > Configuring retention',
            embedding: [1, 0, 0],
          },
          { text: 'retention of storage blocks', tokenCount: 4, section: null, embedding: [0, 1, 0] },
        ],
        MODEL,
      );
      // simple configuration. Row 1: storage (title A, section B), configuring and retention (B),
      // blocks, expire, after, a, while (D): 8 lexemes. Row 2: storage (A, D), retention, of, blocks (D):
      // 4 lexemes. avgdl 6; df storage 2, retention 2.
      const idf = Math.log(1 + (2 - 2 + 0.5) / (2 + 0.5));
      const part = (tf: number, dl: number) => (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / 6));
      const score = (w: { title: number; section: number }) => [
        idf * part(w.title + w.section, 8) + idf * part(w.section, 8),
        idf * part(w.title + 1, 4) + idf * part(1, 4),
      ];
      for (const weights of [BM25F_FIELD_WEIGHTS, { title: 3, section: 1.5 }, { title: 1, section: 1 }]) {
        const items = await retrieval.searchFullText(project, 'storage retention', [1, 0, 0], 5, MODEL, weights);
        const [first, second] = score(weights);
        const expected = [
          ['blocks expire after a while', first.toFixed(6), '1.000000'],
          ['retention of storage blocks', second.toFixed(6), '1.000000'],
        ].sort((a, b) => Number(b[1]) - Number(a[1]));
        expect(
          items.map((i) => [i.text, i.legs?.fulltext?.score.toFixed(6), i.legs?.fulltext?.coverage?.toFixed(6)]),
        ).toEqual(expected);
      }
      expect(
        (await retrieval.searchFullText(project, 'configuring', [1, 0, 0], 5, MODEL)).map((i) => [i.text, i.section]),
      ).toEqual([['blocks expire after a while', 'Storage > Configuring retention']]);
      await expect(
        retrieval.searchFullText(project, 'storage', [1, 0, 0], 5, MODEL, { title: -1, section: 1 }),
      ).rejects.toThrow(RangeError);
    });

    it('keeps the term statistics with every write: insert, replace and delete of a document, and a project dropped', async () => {
      const project = (await projects.create({ name: 'Stats' })).id;
      const stats = async () => ({
        terms: await db.dataSource.query(
          `SELECT lexeme, df FROM text_term_stats WHERE project_id = $1 ORDER BY lexeme`,
          [project],
        ),
        corpus: await db.dataSource.query(
          `SELECT documents, total_length::int AS total_length FROM text_corpus_stats WHERE project_id = $1`,
          [project],
        ),
      });
      const chunk = (text: string) => ({ text, tokenCount: 2, embedding: [1, 0, 0] });
      await knowledge.replaceSource(
        project,
        { uri: 'a', title: 'A', contentHash: '1' },
        [chunk('red fox'), chunk('red')],
        MODEL,
      );
      await knowledge.replaceSource(project, { uri: 'b', title: 'B', contentHash: '1' }, [chunk('blue fox')], MODEL);
      // Each chunk holds its page's title too ('a' or 'b').
      expect(await stats()).toEqual({
        terms: [
          { lexeme: 'a', df: 2 },
          { lexeme: 'b', df: 1 },
          { lexeme: 'blue', df: 1 },
          { lexeme: 'fox', df: 2 },
          { lexeme: 'red', df: 2 },
        ],
        corpus: [{ documents: 3, total_length: 8 }],
      });
      await knowledge.replaceSource(project, { uri: 'a', title: 'A', contentHash: '2' }, [chunk('green owl')], MODEL);
      expect(await stats()).toEqual({
        terms: [
          { lexeme: 'a', df: 1 },
          { lexeme: 'b', df: 1 },
          { lexeme: 'blue', df: 1 },
          { lexeme: 'fox', df: 1 },
          { lexeme: 'green', df: 1 },
          { lexeme: 'owl', df: 1 },
        ],
        corpus: [{ documents: 2, total_length: 6 }],
      });
      expect(await knowledge.deleteSource(project, 'b')).toBe(true);
      expect(await stats()).toEqual({
        terms: [
          { lexeme: 'a', df: 1 },
          { lexeme: 'green', df: 1 },
          { lexeme: 'owl', df: 1 },
        ],
        corpus: [{ documents: 1, total_length: 3 }],
      });
      await db.dataSource.query('DELETE FROM projects WHERE id = $1', [project]);
      expect(await stats()).toEqual({ terms: [], corpus: [] });
    });

    it("returns equal BM25 scores in a stable order: the page's uri, then the chunk's place in it", async () => {
      const project = (await projects.create({ name: 'Ties' })).id;
      const chunk = (text: string) => ({ text, tokenCount: 2, embedding: [1, 0, 0] });
      // Written in the reverse of the expected order, so neither insertion order nor random ids decide.
      await knowledge.replaceSource(
        project,
        { uri: 'docs/z.md', title: 'Z', contentHash: 'h' },
        [chunk('heron')],
        MODEL,
      );
      await knowledge.replaceSource(
        project,
        { uri: 'docs/m.md', title: 'M', contentHash: 'h' },
        [chunk('other words'), chunk('heron'), chunk('heron')],
        MODEL,
      );
      await knowledge.replaceSource(
        project,
        { uri: 'docs/a.md', title: 'A', contentHash: 'h' },
        [chunk('heron')],
        MODEL,
      );
      const found = await retrieval.searchFullText(project, 'heron', [1, 0, 0], 3, MODEL);
      expect(found.map((i) => [i.source, i.legs?.fulltext?.rank])).toEqual([
        ['docs/a.md', 1],
        ['docs/m.md', 2],
        ['docs/m.md', 3],
      ]);
      const scores = found.map((i) => i.legs?.fulltext?.score);
      expect(new Set(scores).size).toBe(1);
      const all = await retrieval.searchFullText(project, 'heron', [1, 0, 0], 10, MODEL);
      expect(all.map((i) => i.source)).toEqual(['docs/a.md', 'docs/m.md', 'docs/m.md', 'docs/z.md']);
    });

    it('abstains when no word matches, or the question has no word', async () => {
      expect(await retrieval.searchFullText(projectA, 'photosynthesis', [1, 0, 0], 10, MODEL)).toEqual([]);
      expect(await retrieval.searchFullText(projectA, '?!  …', [1, 0, 0], 10, MODEL)).toEqual([]);
    });

    it("uses the project's text search configuration: english stems words and drops stop words", async () => {
      const project = (await projects.create({ name: 'English' })).id;
      await knowledge.replaceSource(
        project,
        { uri: 'e.md', title: 'E', contentHash: 'h' },
        [{ text: 'Indexes speed up queries', tokenCount: 4, embedding: [1, 0, 0] }],
        MODEL,
      );
      expect(await retrieval.searchFullText(project, 'indexing query', [1, 0, 0], 5, MODEL)).toEqual([]);
      await projects.updateSettings(project, { retrievalSettings: { textSearchConfig: 'english' } });
      expect(
        (await retrieval.searchFullText(project, 'indexing query', [1, 0, 0], 5, MODEL)).map((i) => i.text),
      ).toEqual(['Indexes speed up queries']);
      expect(await retrieval.searchFullText(project, 'what is the', [1, 0, 0], 5, MODEL)).toEqual([]);
      // Rows written after the change take the configuration too (the insert trigger).
      await knowledge.replaceSource(
        project,
        { uri: 'f.md', title: 'F', contentHash: 'h' },
        [{ text: 'Vacuuming reclaims storage', tokenCount: 3, embedding: [0, 1, 0] }],
        MODEL,
      );
      expect((await retrieval.searchFullText(project, 'vacuum', [1, 0, 0], 5, MODEL)).map((i) => i.text)).toEqual([
        'Vacuuming reclaims storage',
      ]);
    });

    it('matches through the (project_id, tsv) GIN index at scale (EXPLAIN, no planner settings)', async () => {
      const project = (await projects.create({ name: 'Words' })).id;
      const vectors = randomUnitVectors(2000, 256, 7);
      for (let s = 0; s < 4; s++) {
        await knowledge.replaceSource(
          project,
          { uri: `words/${s}`, title: `Words ${s}`, contentHash: 'h' },
          vectors
            .slice(s * 500, (s + 1) * 500)
            .map((embedding, i) => ({ text: `chunk about term${s * 500 + i}`, tokenCount: 3, embedding })),
          'test/random-256',
        );
      }
      await knowledge.refreshStatistics();
      const terms = await questionTerms(db.dataSource, project, 'where is term1234');
      const plan: Array<{ 'QUERY PLAN': string }> = await db.dataSource.query(
        `EXPLAIN (COSTS OFF) ${fullTextSql(256)}`,
        [
          project,
          vectorParam(vectors[1234]),
          8,
          tsqueryOf(terms.lexemes),
          'test/random-256',
          terms.lexemes,
          terms.idf,
          terms.averageLength,
          terms.idf.reduce((a, b) => a + b, 0),
          BM25F_FIELD_WEIGHTS.title,
          BM25F_FIELD_WEIGHTS.section,
        ],
      );
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(
        /Bitmap Index Scan on knowledge_chunks_tsv_idx\n\s+Index Cond: \(\(project_id = '[0-9a-f-]+'::uuid\) AND \(tsv @@ \$\d+\)\)/,
      );
      const items = await retrieval.searchFullText(project, 'where is term1234', vectors[1234], 8, 'test/random-256');
      expect(items.map((i) => i.text)).toEqual(['chunk about term1234']);
      expect(items[0].score).toBeCloseTo(1, 6);
    }, 60_000);
  });

  describe('searchHybrid', () => {
    it('brings a chunk found only by the vector leg into the fused top-K under the lexical default weights 0.5 / 1 (issue 33)', async () => {
      const project = (await projects.create({ name: 'Hybrid' })).id;
      // Ten chunks match the question's one content word (one strongly, nine once) and point away
      // from the question's vector; one chunk shares no word with it but is its nearest neighbour.
      // An empty page title, so the rows' lengths are their text's.
      await knowledge.replaceSource(
        project,
        { uri: 'vacuum.md', title: '', contentHash: 'h' },
        [
          { text: Array.from({ length: 8 }, () => 'vacuum').join(' '), tokenCount: 8, embedding: [0, 1, 0] },
          ...Array.from({ length: 9 }, (_, i) => ({ text: `vacuum note ${i}`, tokenCount: 3, embedding: [0, 1, 0] })),
          { text: 'reclaim disk space from deleted rows', tokenCount: 6, embedding: [1, 0, 0] },
        ],
        MODEL,
      );
      const question = 'vacuum';
      expect(await retrieval.searchFullText(project, question, [1, 0, 0], 30, MODEL)).toHaveLength(10);
      const [nearest] = await retrieval.search(project, [1, 0, 0], 1, MODEL);
      expect(nearest.text).toBe('reclaim disk space from deleted rows');

      const fused = await retrieval.searchHybrid(project, question, [1, 0, 0], 5, MODEL, { vector: 0.5, fulltext: 1 });
      expect(fused).toHaveLength(5);
      expect(fused.slice(0, 2).map((i) => i.text)).toEqual([
        'vacuum vacuum vacuum vacuum vacuum vacuum vacuum vacuum',
        'reclaim disk space from deleted rows',
      ]);
      expect(fused[1].legs?.vector?.rank).toBe(1);
      expect(fused[1].legs?.fulltext).toBeUndefined();
      expect(fused[1].legs?.fused).toBeCloseTo(1 / 3, 12);
    });
  });

  describe('hnswSettings', () => {
    it('asks for ef_search 2 × top-K within 40..1000, with strict-order iterative scans', () => {
      expect(hnswSettings(10)).toEqual({ efSearch: 40, iterative: 'strict_order' });
      expect(hnswSettings(30)).toEqual({ efSearch: 60, iterative: 'strict_order' });
      expect(hnswSettings(200)).toEqual({ efSearch: 400, iterative: 'strict_order' });
    });
  });

  describe('fullTextQuery', () => {
    it('ORs the distinct lower-cased words, at most 32 of at most 50 characters', () => {
      expect(fullTextQuery("How do I VACUUM a table? vacuum it's 2x")).toBe(
        "'how' | 'do' | 'i' | 'vacuum' | 'a' | 'table' | 'it' | 's' | '2x'",
      );
      expect(fullTextQuery('x'.repeat(51) + ' ok')).toBe("'ok'");
      expect(fullTextQuery(Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ')).split(' | ')).toHaveLength(32);
      expect(fullTextQuery("'; DROP TABLE projects; --")).toBe("'drop' | 'table' | 'projects'");
    });
  });
});
