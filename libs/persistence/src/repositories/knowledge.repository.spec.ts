import { CredentialsCipher } from '../credentials-cipher';
import { EmbeddingSpaceMismatchError } from '../errors';
import { createTestDatabase, type TestDatabase } from '../testing';
import { InsightsRepository } from './insights.repository';
import { KnowledgeRepository } from './knowledge.repository';
import { ProjectsRepository } from './projects.repository';

const MODEL = 'test/fixed';
const chunk = (text: string, embedding: number[] = [1, 0, 0]) => ({
  text,
  tokenCount: text.split(' ').length,
  embedding,
});

describe(KnowledgeRepository.name, () => {
  let db: TestDatabase;
  let knowledge: KnowledgeRepository;
  let projects: ProjectsRepository;
  const newProject = async () => (await projects.create({ name: 'P' })).id;
  const chunkRows = (projectId: string) =>
    db.dataSource.query(
      `SELECT s.uri, k.ordinal, k.text, k.token_count, k.embedding_dims FROM knowledge_chunks k JOIN knowledge_sources s ON s.id = k.source_id
        WHERE k.project_id = $1 ORDER BY s.uri, k.ordinal`,
      [projectId],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    knowledge = new KnowledgeRepository(db.dataSource);
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
  });
  afterAll(() => db.drop());

  describe('replaceSource', () => {
    it('creates a source with its chunks in order', async () => {
      const project = await newProject();
      const result = await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v1' },
        [chunk('one two'), chunk('three')],
        MODEL,
      );
      expect(result).toMatchObject({ status: 'created', chunkCount: 2 });
      expect(await chunkRows(project)).toEqual([
        { uri: 'a.md', ordinal: 0, text: 'one two', token_count: 2, embedding_dims: 3 },
        { uri: 'a.md', ordinal: 1, text: 'three', token_count: 1, embedding_dims: 3 },
      ]);
      expect(await knowledge.findSource(project, 'a.md')).toMatchObject({
        title: 'A',
        contentHash: 'v1',
        chunkCount: 2,
        embeddingDims: 3,
        embeddingModel: MODEL,
      });
    });

    it('replacing twice leaves no duplicates: only the latest chunks remain', async () => {
      const project = await newProject();
      const first = await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v1' },
        [chunk('old 1'), chunk('old 2'), chunk('old 3')],
        MODEL,
      );
      const second = await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A2', contentHash: 'v2' },
        [chunk('new 1'), chunk('new 2')],
        MODEL,
      );
      expect(second).toEqual({ sourceId: first.sourceId, status: 'replaced', chunkCount: 2 });
      expect((await chunkRows(project)).map((r: { text: string }) => r.text)).toEqual(['new 1', 'new 2']);
      expect(await knowledge.listSources(project)).toHaveLength(1);
    });

    it('skips a source whose content hash is unchanged, writing nothing', async () => {
      const project = await newProject();
      const first = await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v1' },
        [chunk('kept')],
        MODEL,
      );
      const again = await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v1' },
        [chunk('ignored'), chunk('ignored too')],
        MODEL,
      );
      expect(again).toEqual({ sourceId: first.sourceId, status: 'unchanged', chunkCount: 1 });
      expect((await chunkRows(project)).map((r: { text: string }) => r.text)).toEqual(['kept']);
    });

    it('keeps the old chunks when the replacement fails (one transaction)', async () => {
      const project = await newProject();
      await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v1' },
        [chunk('survivor')],
        MODEL,
      );
      await expect(
        knowledge.replaceSource(
          project,
          { uri: 'a.md', title: 'A', contentHash: 'v2' },
          [chunk('fine'), { text: 'bad', tokenCount: -1, embedding: [1, 0, 0] }],
          MODEL,
        ),
      ).rejects.toThrow(/knowledge_chunks_token_count_check/);
      expect((await chunkRows(project)).map((r: { text: string }) => r.text)).toEqual(['survivor']);
      expect((await knowledge.findSource(project, 'a.md'))?.contentHash).toBe('v1');
    });

    it('refuses vectors of another length or model than the project already stores', async () => {
      const project = await newProject();
      await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v1' },
        [chunk('three dims')],
        MODEL,
      );
      await expect(
        knowledge.replaceSource(
          project,
          { uri: 'b.md', title: 'B', contentHash: 'v1' },
          [chunk('four', [1, 0, 0, 0])],
          MODEL,
        ),
      ).rejects.toThrow(EmbeddingSpaceMismatchError);
      await expect(
        knowledge.replaceSource(
          project,
          { uri: 'b.md', title: 'B', contentHash: 'v1' },
          [chunk('other model')],
          'other/model',
        ),
      ).rejects.toThrow(
        'already stores embeddings from test/fixed (3 dimensions); refusing to add vectors from other/model (3 dimensions)',
      );
      expect(await knowledge.findSource(project, 'b.md')).toBeNull();
    });

    it('lets the only source of a project be re-embedded with another model', async () => {
      const project = await newProject();
      await knowledge.replaceSource(project, { uri: 'a.md', title: 'A', contentHash: 'v1' }, [chunk('x')], MODEL);
      const result = await knowledge.replaceSource(
        project,
        { uri: 'a.md', title: 'A', contentHash: 'v2' },
        [chunk('x', [1, 0, 0, 0])],
        'other/model',
      );
      expect(result.status).toBe('replaced');
      expect(await knowledge.storedEmbeddingSpaces(project)).toEqual([{ model: 'other/model', dimensions: 4 }]);
    });

    it('refuses chunks whose embeddings differ in length', async () => {
      const project = await newProject();
      await expect(
        knowledge.replaceSource(
          project,
          { uri: 'a.md', title: 'A', contentHash: 'v1' },
          [chunk('a'), chunk('b', [1, 0])],
          MODEL,
        ),
      ).rejects.toThrow('chunk embeddings differ in length: 2 vs 3');
    });
  });

  describe('storedEmbeddingSpaces', () => {
    it('reports the spaces of knowledge, insights and recommendations', async () => {
      const project = await newProject();
      expect(await knowledge.storedEmbeddingSpaces(project)).toEqual([]);
      await knowledge.replaceSource(project, { uri: 'a.md', title: 'A', contentHash: 'v1' }, [chunk('x')], MODEL);
      await new InsightsRepository(db.dataSource).upsertInsights(
        project,
        [{ externalId: 'i', name: 'n', description: 'd', contentHash: 'h', embedding: [0, 1, 0] }],
        MODEL,
      );
      expect(await knowledge.storedEmbeddingSpaces(project)).toEqual([{ model: MODEL, dimensions: 3 }]);
    });
  });

  describe('ProjectsRepository.findForAsk', () => {
    it('returns the project, its credentials and the spaces storedEmbeddingSpaces reports, in one statement', async () => {
      const project = await newProject();
      expect((await projects.findForAsk(project))?.spaces).toEqual([]);
      await knowledge.replaceSource(project, { uri: 'a.md', title: 'A', contentHash: 'v1' }, [chunk('x')], MODEL);
      await knowledge.replaceSource(project, { uri: 'empty.md', title: 'E', contentHash: 'v1' }, [], 'empty/model');
      await new InsightsRepository(db.dataSource).upsertInsights(
        project,
        [{ externalId: 'i', name: 'n', description: 'd', contentHash: 'h', embedding: [0, 1, 0] }],
        MODEL,
      );
      // Writes refuse a second space; a project whose stored vectors straddle two (the state the
      // 409 embedding_space_changed reports) is made by hand.
      await db.dataSource.query(`UPDATE knowledge_sources SET embedding_model = 'other/model' WHERE project_id = $1`, [
        project,
      ]);
      const found = await projects.findForAsk(project);
      expect(found).toEqual({
        project: await projects.findById(project),
        credentials: null,
        spaces: [
          { model: 'other/model', dimensions: 3 },
          { model: MODEL, dimensions: 3 },
        ],
      });
      expect(found?.spaces).toEqual(await knowledge.storedEmbeddingSpaces(project));
      expect(await projects.findForAsk('00000000-0000-4000-8000-000000000000')).toBeNull();
      expect(await projects.findForAsk('not-a-uuid')).toBeNull();
    });
  });

  describe('deleteSource / deleteAllForProject', () => {
    it('deletes one source with its chunks, then everything of the project', async () => {
      const project = await newProject();
      await knowledge.replaceSource(project, { uri: 'a.md', title: 'A', contentHash: 'v1' }, [chunk('a')], MODEL);
      await knowledge.replaceSource(project, { uri: 'b.md', title: 'B', contentHash: 'v1' }, [chunk('b')], MODEL);
      expect(await knowledge.deleteSource(project, 'a.md')).toBe(true);
      expect(await knowledge.deleteSource(project, 'a.md')).toBe(false);
      expect((await chunkRows(project)).map((r: { uri: string }) => r.uri)).toEqual(['b.md']);
      await knowledge.deleteAllForProject(project);
      expect(await chunkRows(project)).toEqual([]);
      expect(await knowledge.storedEmbeddingSpaces(project)).toEqual([]);
    });
  });
});
