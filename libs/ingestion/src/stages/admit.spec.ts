import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  CredentialsCipher,
  EmbeddingSpaceMismatchError,
  KnowledgeRepository,
  ProjectsRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { admitUpload, embeddingSpace } from './admit';

describe(embeddingSpace.name, () => {
  it('names the space provider/model with the vector length', () => {
    expect(embeddingSpace(new LocalEmbeddingProvider({ dimensions: 256 }))).toEqual({
      model: `local/${new LocalEmbeddingProvider().model}`,
      dimensions: 256,
    });
  });
});

// Integration: the admit stage on a throwaway PostgreSQL database.
describe(admitUpload.name, () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let knowledge: KnowledgeRepository;
  let projects: ProjectsRepository;
  const english = ['The index builds a graph of the vectors.', 'Each query walks the graph from the top layer.'];
  const configOf = async (projectId: string): Promise<string> =>
    (await db.dataSource.query('SELECT text_search_config AS c FROM projects WHERE id = $1', [projectId]))[0].c;
  const chunk = (dims: number) => [{ text: 'x', tokenCount: 1, embedding: Array.from({ length: dims }, () => 0.5) }];

  beforeAll(async () => {
    db = await createTestDatabase();
    knowledge = new KnowledgeRepository(db.dataSource);
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
  });
  afterAll(() => db.drop());

  it('returns the provider’s space and sets a new project’s full-text configuration from the texts’ language', async () => {
    const projectId = (await projects.create({ name: 'new' })).id;
    const provider = new LocalEmbeddingProvider({ dimensions: 256 });
    expect([await configOf(projectId), await admitUpload(knowledge, projectId, provider, english)]).toEqual([
      'simple',
      embeddingSpace(provider),
    ]);
    expect(await configOf(projectId)).toBe('english');
  });

  it('refuses a provider of another vector length than the stored vectors, before writing anything', async () => {
    const projectId = (await projects.create({ name: 'stored' })).id;
    const stored = new LocalEmbeddingProvider({ dimensions: 128 });
    await knowledge.replaceSource(
      projectId,
      { uri: 'a.md', title: 'A', contentHash: 'h' },
      chunk(128),
      embeddingSpace(stored).model,
    );
    const err = await admitUpload(knowledge, projectId, new LocalEmbeddingProvider({ dimensions: 256 }), english).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EmbeddingSpaceMismatchError);
    expect((err as EmbeddingSpaceMismatchError).stored).toEqual([embeddingSpace(stored)]);
    expect(await configOf(projectId)).toBe('simple');
  });

  it('accepts the stored space again', async () => {
    const projectId = (await projects.create({ name: 'same' })).id;
    const provider = new LocalEmbeddingProvider({ dimensions: 128 });
    await knowledge.replaceSource(
      projectId,
      { uri: 'a.md', title: 'A', contentHash: 'h' },
      chunk(128),
      embeddingSpace(provider).model,
    );
    expect(await admitUpload(knowledge, projectId, provider, english)).toEqual({
      model: embeddingSpace(provider).model,
      dimensions: 128,
    });
  });
});
