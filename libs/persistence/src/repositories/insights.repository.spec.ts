import { CredentialsCipher } from '../credentials-cipher';
import { EmbeddingSpaceMismatchError } from '../errors';
import { createTestDatabase, type TestDatabase } from '../testing';
import { InsightsRepository } from './insights.repository';
import { ProjectsRepository } from './projects.repository';

const MODEL = 'test/fixed';

describe(InsightsRepository.name, () => {
  let db: TestDatabase;
  let insights: InsightsRepository;
  let projects: ProjectsRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    insights = new InsightsRepository(db.dataSource);
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
  });
  afterAll(() => db.drop());

  describe('upsertInsights', () => {
    it('inserts, then updates by external id without duplicates', async () => {
      const project = (await projects.create({ name: 'P' })).id;
      expect(
        await insights.upsertInsights(
          project,
          [
            { externalId: 'churn', name: 'Churn up', description: 'v1', contentHash: 'h1', embedding: [1, 0] },
            { externalId: 'nps', name: 'NPS', description: 'flat', contentHash: 'h2', embedding: [0, 1] },
          ],
          MODEL,
        ),
      ).toBe(2);
      expect(
        await insights.upsertInsights(
          project,
          [{ externalId: 'churn', name: 'Churn up', description: 'v2', contentHash: 'h3', embedding: [1, 1] }],
          MODEL,
        ),
      ).toBe(1);
      const rows = await db.dataSource.query(
        'SELECT external_id, description, embedding::text AS embedding FROM insights WHERE project_id = $1 ORDER BY external_id',
        [project],
      );
      expect(rows).toEqual([
        { external_id: 'churn', description: 'v2', embedding: '[1,1]' },
        { external_id: 'nps', description: 'flat', embedding: '[0,1]' },
      ]);
      expect(await insights.contentHashes(project, 'insight')).toEqual(
        new Map([
          ['churn', 'h3'],
          ['nps', 'h2'],
        ]),
      );
    });

    it('refuses another embedding space', async () => {
      const project = (await projects.create({ name: 'P' })).id;
      await insights.upsertInsights(
        project,
        [{ externalId: 'a', name: 'a', description: 'a', contentHash: 'h', embedding: [1, 0] }],
        MODEL,
      );
      await expect(
        insights.upsertInsights(
          project,
          [{ externalId: 'b', name: 'b', description: 'b', contentHash: 'h', embedding: [1, 0, 0] }],
          MODEL,
        ),
      ).rejects.toThrow(EmbeddingSpaceMismatchError);
    });
  });

  describe('upsertRecommendations', () => {
    it('keeps recommendations apart from insights with the same external id', async () => {
      const project = (await projects.create({ name: 'P' })).id;
      await insights.upsertInsights(
        project,
        [{ externalId: 'x', name: 'I', description: 'i', contentHash: 'hi', embedding: [1, 0] }],
        MODEL,
      );
      await insights.upsertRecommendations(
        project,
        [{ externalId: 'x', title: 'R', body: 'r', contentHash: 'hr', embedding: [0, 1] }],
        MODEL,
      );
      expect(await insights.contentHashes(project, 'insight')).toEqual(new Map([['x', 'hi']]));
      expect(await insights.contentHashes(project, 'recommendation')).toEqual(new Map([['x', 'hr']]));
    });
  });

  describe('deleteMissing', () => {
    it('deletes the items not listed', async () => {
      const project = (await projects.create({ name: 'P' })).id;
      await insights.upsertRecommendations(
        project,
        ['a', 'b', 'c'].map((id) => ({ externalId: id, title: id, body: id, contentHash: id, embedding: [1, 0] })),
        MODEL,
      );
      expect(await insights.deleteMissing(project, 'recommendation', ['b'])).toBe(2);
      expect([...(await insights.contentHashes(project, 'recommendation')).keys()]).toEqual(['b']);
    });
  });
});
