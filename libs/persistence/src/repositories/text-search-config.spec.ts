import { seededRandom } from '@ask/testing';
import { CredentialsCipher } from '../credentials-cipher';
import { createTestDatabase, type TestDatabase } from '../testing';
import { vectorParam } from '../vector';
import { KnowledgeRepository } from './knowledge.repository';
import { ProjectsRepository } from './projects.repository';
import {
  BM25F_FIELD_WEIGHTS,
  fullTextSql,
  questionTerms,
  RetrievalRepository,
  searchSql,
  tsqueryOf,
} from './retrieval.repository';

const MODEL = 'test/random-256';

function randomUnitVectors(count: number, seed: number): number[][] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const v = Array.from({ length: 256 }, () => random() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

describe('the text search configuration in force (applyTextSearchConfig)', () => {
  let db: TestDatabase;
  let knowledge: KnowledgeRepository;
  let projects: ProjectsRepository;
  let retrieval: RetrievalRepository;
  /** Each distinct `ts_config` of the project's chunks. */
  const rowConfigs = async (projectId: string): Promise<string[]> =>
    (
      await db.dataSource.query(
        'SELECT DISTINCT ts_config::text AS c FROM knowledge_chunks WHERE project_id = $1 ORDER BY 1',
        [projectId],
      )
    ).map((r: { c: string }) => r.c);
  const store = (projectId: string, uri: string, language: string | null, texts: string[], seed = 1) =>
    knowledge.replaceSource(
      projectId,
      { uri, title: uri, contentHash: uri, language },
      randomUnitVectors(texts.length, seed).map((embedding, i) => ({ text: texts[i], tokenCount: 3, embedding })),
      MODEL,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    knowledge = new KnowledgeRepository(db.dataSource);
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    retrieval = new RetrievalRepository(db.dataSource);
  });
  afterAll(() => db.drop());

  it("indexes a chunk's page title and section path with the configuration in force, and re-indexes them when it changes", async () => {
    const project = (await projects.create({ name: 'fields' })).id;
    await knowledge.replaceSource(
      project,
      { uri: 'Storing Blocks', title: 'Storing Blocks', contentHash: 'h', language: 'en' },
      [
        {
          text: 'Blocks are kept',
          tokenCount: 3,
          section: 'Configuring the retention',
          embedding: randomUnitVectors(1, 3)[0],
        },
      ],
      MODEL,
    );
    const tsv = async () =>
      (await db.dataSource.query('SELECT tsv::text AS t FROM knowledge_chunks WHERE project_id = $1', [project]))[0].t;
    expect(await tsv()).toBe("'are':7 'blocks':2A,6 'configuring':3B 'kept':8 'retention':5B 'storing':1A 'the':4B");
    expect(await knowledge.applyTextSearchConfig(project)).toBe('english');
    expect(await tsv()).toBe("'block':2A,6 'configur':3B 'kept':8 'retent':5B 'store':1A");
  });

  it.each([
    ['en', 'english'],
    ['de', 'german'],
    ['fr', 'french'],
    ['ru', 'russian'],
    ['zh', 'simple'],
    ['ja', 'simple'],
  ])('knowledge detected as %s is indexed and queried with %s', async (language, config) => {
    const project = (await projects.create({ name: language })).id;
    await store(project, 'a', language, ['one chunk', 'another chunk']);
    expect(await rowConfigs(project)).toEqual(['simple']);
    expect(await knowledge.applyTextSearchConfig(project)).toBe(config);
    expect((await projects.findById(project))?.textSearchConfig).toBe(config);
    expect(await rowConfigs(project)).toEqual([config]);
    // Rows written afterwards take it at insert (the trigger reads projects.text_search_config).
    await store(project, 'b', language, ['a later chunk']);
    expect(await rowConfigs(project)).toEqual([config]);
  });

  it('follows the language of most chunks; stays as it is when nothing is detected; an explicit setting wins', async () => {
    const project = (await projects.create({ name: 'mixed' })).id;
    expect(await knowledge.applyTextSearchConfig(project)).toBe('simple');
    expect(await knowledge.applyTextSearchConfig(project, 'de')).toBe('german');
    await store(project, 'en', 'en', ['Indexes speed up queries', 'Vacuuming reclaims storage']);
    await store(project, 'de', 'de', ['Indizes beschleunigen Abfragen']);
    await store(project, 'unknown', null, ['x', 'y', 'z']);
    // Two English chunks against one German one (a stored language outweighs the provisional one).
    expect(await knowledge.applyTextSearchConfig(project, 'de')).toBe('english');
    expect(await rowConfigs(project)).toEqual(['english']);
    expect(
      (await retrieval.searchFullText(project, 'indexing query', randomUnitVectors(1, 9)[0], 5, MODEL)).map(
        (i) => i.text,
      ),
    ).toEqual(['Indexes speed up queries']);
    await projects.updateSettings(project, { retrievalSettings: { textSearchConfig: 'simple' } });
    expect((await projects.findById(project))?.textSearchConfig).toBe('simple');
    expect(await rowConfigs(project)).toEqual(['simple']);
    expect(await knowledge.applyTextSearchConfig(project)).toBe('simple');
    expect(await retrieval.searchFullText(project, 'indexing query', randomUnitVectors(1, 9)[0], 5, MODEL)).toEqual([]);
    await projects.updateSettings(project, { retrievalSettings: { method: 'hybrid' } });
    expect((await projects.findById(project))?.textSearchConfig).toBe('english');
    expect(await rowConfigs(project)).toEqual(['english']);
    // A project created with an explicit configuration has it in force from the start.
    const explicit = await projects.create({ name: 'explicit', retrievalSettings: { textSearchConfig: 'dutch' } });
    expect(explicit.textSearchConfig).toBe('dutch');
    expect(await knowledge.applyTextSearchConfig('not-a-uuid')).toBeNull();
  });

  it('with a detected configuration, the full-text leg still uses the (project_id, tsv) GIN index and the vector leg the HNSW index, both under the tenant and embedding-model filters (EXPLAIN)', async () => {
    const project = (await projects.create({ name: 'plans' })).id;
    const other = (await projects.create({ name: 'other' })).id;
    const vectors = randomUnitVectors(2000, 7);
    for (let s = 0; s < 4; s++) {
      await knowledge.replaceSource(
        project,
        { uri: `words/${s}`, title: `Words ${s}`, contentHash: 'h', language: 'en' },
        vectors
          .slice(s * 500, (s + 1) * 500)
          .map((embedding, i) => ({ text: `indexes about term${s * 500 + i}`, tokenCount: 3, embedding })),
        MODEL,
      );
    }
    await store(other, 'other', 'en', ['indexes about term1234'], 3);
    expect(await knowledge.applyTextSearchConfig(project)).toBe('english');
    await knowledge.refreshStatistics();
    const params = [project, vectorParam(vectors[1234]), 8];
    const terms = await questionTerms(db.dataSource, project, 'indexing term1234');
    // english stems 'indexing' to 'index'; the statistics give both lexemes an idf.
    expect(terms.lexemes).toEqual(['index', 'term1234']);
    const fullText: Array<{ 'QUERY PLAN': string }> = await db.dataSource.query(
      `EXPLAIN (COSTS OFF) ${fullTextSql(256)}`,
      [
        ...params,
        tsqueryOf(terms.lexemes),
        MODEL,
        terms.lexemes,
        terms.idf,
        terms.averageLength,
        terms.idf.reduce((a, b) => a + b, 0),
        BM25F_FIELD_WEIGHTS.title,
        BM25F_FIELD_WEIGHTS.section,
      ],
    );
    const fullTextPlan = fullText.map((r) => r['QUERY PLAN']).join('\n');
    expect(fullTextPlan).toMatch(
      /Bitmap Index Scan on knowledge_chunks_tsv_idx\n\s+Index Cond: \(\(project_id = '[0-9a-f-]+'::uuid\) AND \(tsv @@ \$\d+\)\)/,
    );
    expect(fullTextPlan).toMatch(
      /Filter: \(\(embedding_dims = 256\) AND \(embedding_model = 'test\/random-256'::text\)\)/,
    );
    const vector: Array<{ 'QUERY PLAN': string }> = await db.dataSource.transaction(async (m) => {
      await m.query('SET LOCAL hnsw.iterative_scan = strict_order');
      // 2,000 rows: an exact sort is still cheaper, so price it out to see that the index matches.
      await m.query('SET LOCAL enable_sort = off');
      return m.query(`EXPLAIN (COSTS OFF) ${searchSql(256)}`, [...params, MODEL]);
    });
    const vectorPlan = vector.map((r) => r['QUERY PLAN']).join('\n');
    expect(vectorPlan).toContain('Index Scan using knowledge_chunks_embedding_256_hnsw_idx on knowledge_chunks k');
    expect(vectorPlan).toMatch(
      /Filter: \(\(project_id = '[0-9a-f-]+'::uuid\) AND \(embedding_model = 'test\/random-256'::text\)\)/,
    );
    // Stemmed by the english configuration ('indexing' → 'index'); the other project's identical row never shows.
    const items = await retrieval.searchHybrid(project, 'indexing term1234', vectors[1234], 8, MODEL, {
      vector: 1,
      fulltext: 1,
    });
    expect(items[0].text).toBe('indexes about term1234');
    expect(items[0].legs?.fulltext?.rank).toBe(1);
    expect(items[0].legs?.vector?.rank).toBe(1);
    expect(items.every((i) => i.source?.startsWith('words/'))).toBe(true);
    // A query vector of another model finds nothing in either leg.
    expect(
      await retrieval.searchHybrid(project, 'indexing term1234', vectors[1234], 8, 'test/other', {
        vector: 1,
        fulltext: 1,
      }),
    ).toEqual([]);
  }, 120_000);
});
