import { LocalEmbeddingProvider } from '@ask/llm-providers';
import { CredentialsCipher, InsightsRepository, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import type { IngestionProgress } from '../ingestion.service';
import { embeddingSpace } from './admit';
import { ingestItems, ItemsProgress } from './items';

// Integration: the items stage on a throwaway PostgreSQL database, with the local embedder.
describe(ingestItems.name, () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let insights: InsightsRepository;
  let projectId: string;
  const provider = Object.assign(new LocalEmbeddingProvider({ dimensions: 64 }), { maxBatchSize: 2 });
  const space = embeddingSpace(provider);
  const items = [
    { id: 'i1', name: 'Churn', description: 'Customers leave after the trial.' },
    { id: 'i2', name: 'Latency', description: 'Search answers slowly at peak.' },
    { id: 'i3', name: 'Onboarding', description: 'New users skip the tour.' },
  ];
  const textOf = (i: (typeof items)[number]) => `${i.name}\n${i.description}`;
  const write = (batch: Array<{ item: (typeof items)[number]; hash: string; embedding: number[] }>) =>
    insights.upsertInsights(
      projectId,
      batch.map(({ item, hash, embedding }) => ({
        externalId: item.id,
        name: item.name,
        description: item.description,
        contentHash: hash,
        embedding,
      })),
      space.model,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    insights = new InsightsRepository(db.dataSource);
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectId = (await projects.create({ name: 'items' })).id;
  });
  afterAll(() => db.drop());

  it('embeds changed items in batches of maxBatchSize, then skips them unchanged on the next run', async () => {
    const progress: IngestionProgress[] = [];
    const ctx = {
      insights,
      projectId,
      provider,
      space,
      options: {},
      progress: new ItemsProgress(3, (p) => progress.push(p)),
    };
    expect(await ingestItems(ctx, 'insight', items, textOf, write)).toEqual({
      written: 3,
      skippedUnchanged: 0,
      failed: 0,
    });
    const totals = { total: 3, unchanged: 0, failed: 0 };
    expect(progress).toEqual([
      { ...totals, done: 2, chunks: 2, created: 2 },
      { ...totals, done: 3, chunks: 3, created: 3 },
      { ...totals, done: 3, chunks: 3, created: 3 },
    ]);
    expect([...(await insights.contentHashes(projectId, 'insight')).keys()].sort()).toEqual(['i1', 'i2', 'i3']);

    const again: IngestionProgress[] = [];
    const next = { ...ctx, progress: new ItemsProgress(3, (p) => again.push(p)) };
    const changed = [items[0], items[1], { ...items[2], description: 'New users finish the tour.' }];
    expect(await ingestItems(next, 'insight', changed, textOf, write)).toEqual({
      written: 1,
      skippedUnchanged: 2,
      failed: 0,
    });
    expect(again).toEqual([
      { total: 3, done: 1, chunks: 1, created: 1, unchanged: 0, failed: 0 },
      { total: 3, done: 3, chunks: 1, created: 1, unchanged: 2, failed: 0 },
    ]);
  });
});
