import { embeddingUpstream } from '@ask/ask-errors';
import { CredentialsCipher, KnowledgeRepository, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import type { SourceDocument } from '../load-documents';
import type { PendingDocument } from './embed-batches';
import { storeDocument } from './store';
import { IngestionTally } from './tally';

// Integration: the store stage on a throwaway PostgreSQL database.
describe(storeDocument.name, () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let knowledge: KnowledgeRepository;
  let projectId: string;
  const model = 'local/spec';
  const doc: SourceDocument = { uri: 'guide.md', title: 'Guide', text: 'The index builds a graph of the vectors.' };
  const entry = (hash: string, texts: string[], extra: Partial<PendingDocument<SourceDocument>> = {}) => ({
    doc,
    skip: false,
    hash,
    chunks: texts.map((text) => ({ text, tokenCount: 5 })),
    embeddings: texts.map((_, i) => Array.from({ length: 8 }, (_, j) => (j === i ? 1 : 0))),
    missing: 0,
    ...extra,
  });
  const sources = async () =>
    db.dataSource.query(
      'SELECT uri, title, content_hash, language, chunk_count FROM knowledge_sources WHERE project_id = $1',
      [projectId],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    knowledge = new KnowledgeRepository(db.dataSource);
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectId = (await projects.create({ name: 'store' })).id;
  });
  afterAll(() => db.drop());

  it('creates, then skips the same hash, replaces a new one, and counts a skipped and a failed document', async () => {
    const tally = new IngestionTally(5);
    const failed: Array<[string, string]> = [];
    const onFailed = (uri: string, error: { code: string }) => void failed.push([uri, error.code]);
    await storeDocument(knowledge, projectId, model, entry('h1', ['one', 'two']), tally, onFailed);
    expect(await sources()).toEqual([
      { uri: 'guide.md', title: 'Guide', content_hash: 'h1', language: 'en', chunk_count: 2 },
    ]);
    await storeDocument(knowledge, projectId, model, entry('h1', ['one', 'two']), tally, onFailed);
    await storeDocument(knowledge, projectId, model, entry('h2', ['three']), tally, onFailed);
    await storeDocument(knowledge, projectId, model, entry('h3', [], { skip: true }), tally, onFailed);
    const refused = embeddingUpstream('provider=openai status=400 refused');
    await storeDocument(knowledge, projectId, model, entry('h4', ['x'], { failed: refused }), tally, onFailed);
    expect(tally.result).toEqual({ sources: 5, created: 1, replaced: 1, skippedUnchanged: 2, chunks: 3, failed: 1 });
    expect(failed).toEqual([['guide.md', 'embedding_upstream']]);
    // The skipped and the failed document wrote nothing: the replaced chunks stay.
    expect(await sources()).toEqual([
      { uri: 'guide.md', title: 'Guide', content_hash: 'h2', language: 'en', chunk_count: 1 },
    ]);
  });
});
