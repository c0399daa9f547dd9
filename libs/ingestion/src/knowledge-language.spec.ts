import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  RetrievalRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { IngestionService } from './ingestion.service';
import { loadDocuments, type SourceDocument } from './load-documents';

const FIXTURES = resolve(__dirname, '..', '..', '..', 'fixtures', 'data');
/** The UDHR in one language (fixtures/data/text-udhr), as one document. */
const udhr = (file: string): SourceDocument => ({
  uri: `udhr/${file}`,
  title: file,
  text: readFileSync(resolve(FIXTURES, 'text-udhr', `udhr_${file}.txt`), 'utf8'),
});

describe('ingestion: the full-text configuration follows the knowledge language', () => {
  let db: TestDatabase;
  let service: IngestionService;
  let projects: ProjectsRepository;
  let knowledge: KnowledgeRepository;
  let retrieval: RetrievalRepository;
  const embedder = new LocalEmbeddingProvider();
  const model = `${embedder.provider}/${embedder.model}`;
  const rowConfigs = async (projectId: string): Promise<string[]> =>
    (
      await db.dataSource.query(
        `SELECT DISTINCT ts_config::text AS c FROM knowledge_chunks WHERE project_id = $1
         UNION SELECT DISTINCT ts_config::text FROM insights WHERE project_id = $1 ORDER BY 1`,
        [projectId],
      )
    ).map((r: { c: string }) => r.c);

  beforeAll(async () => {
    db = await createTestDatabase();
    knowledge = new KnowledgeRepository(db.dataSource);
    service = new IngestionService(knowledge, new InsightsRepository(db.dataSource));
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    retrieval = new RetrievalRepository(db.dataSource);
  });
  afterAll(() => db.drop());

  it("English documentation: every source's language stored, the project and its chunks on english (the language of most chunks)", async () => {
    const project = (await projects.create({ name: 'en' })).id;
    const kb = await loadDocuments(resolve(FIXTURES, 'kb-pgvector'));
    await service.ingest(project, kb, embedder);
    // SOURCE.txt (417 characters of paths and URLs) reads as Latin to tinyld: most chunks are English.
    expect((await knowledge.listSources(project)).map((s) => [s.uri, s.language])).toEqual([
      ['kb-pgvector/CHANGELOG.md', 'en'],
      ['kb-pgvector/LICENSE.txt', 'en'],
      ['kb-pgvector/README.md', 'en'],
      ['kb-pgvector/SOURCE.txt', 'la'],
    ]);
    expect((await projects.findById(project))?.textSearchConfig).toBe('english');
    expect(await rowConfigs(project)).toEqual(['english']);
    // english drops stop words: a question of stop words only matches nothing (under `simple` it matches every chunk).
    const [question] = await embedder.embed(['what is the']);
    expect(await retrieval.searchFullText(project, 'what is the', question, 3, model)).toEqual([]);
    expect((await retrieval.searchFullText(project, 'indexing', question, 3, model)).length).toBe(3);
  });

  it.each([
    ['deu_1996', 'de', 'german'],
    ['fra', 'fr', 'french'],
    ['rus', 'ru', 'russian'],
    ['cmn_hans', 'zh', 'simple'],
  ])('the UDHR in %s: detected %s, configuration %s', async (file, language, config) => {
    const project = (await projects.create({ name: file })).id;
    await service.ingest(project, [udhr(file)], embedder);
    expect((await knowledge.listSources(project)).map((s) => s.language)).toEqual([language]);
    expect((await projects.findById(project))?.textSearchConfig).toBe(config);
    expect(await rowConfigs(project)).toEqual([config]);
  });

  it('insights of a project with no knowledge take their language; later knowledge of most chunks decides; an explicit setting wins', async () => {
    const project = (await projects.create({ name: 'insights first' })).id;
    const description = readFileSync(resolve(FIXTURES, 'text-udhr', 'udhr_spa.txt'), 'utf8').slice(0, 600);
    await service.ingestInsights(
      project,
      { insights: [{ id: 'i1', name: 'Derechos', description }], recommendations: [] },
      embedder,
    );
    expect((await projects.findById(project))?.textSearchConfig).toBe('spanish');
    await service.ingest(project, [udhr('eng')], embedder);
    expect((await projects.findById(project))?.textSearchConfig).toBe('english');
    expect(await rowConfigs(project)).toEqual(['english']);
    await projects.updateSettings(project, { retrievalSettings: { textSearchConfig: 'simple' } });
    await service.ingest(project, [udhr('fra')], embedder);
    expect((await projects.findById(project))?.textSearchConfig).toBe('simple');
    expect(await rowConfigs(project)).toEqual(['simple']);
  });
});
