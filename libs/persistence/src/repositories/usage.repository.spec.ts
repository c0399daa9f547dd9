import { createTestDatabase, type TestDatabase } from '../testing';
import { UsageRepository } from './usage.repository';

describe(UsageRepository.name, () => {
  let db: TestDatabase;
  let usage: UsageRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    usage = new UsageRepository(db.dataSource);
  });
  afterAll(() => db.drop());

  describe('record / recent', () => {
    it("returns the model's newest n records, newest first", async () => {
      for (const [estimated, reported] of [
        [100, 110],
        [200, 190],
        [300, 330],
      ]) {
        await usage.record({ model: 'gpt-4o', counterId: 'approx:script-aware', estimated, reported });
      }
      await usage.record({ model: 'other', counterId: 'x', estimated: 1, reported: 1 });
      const recent = await usage.recent('gpt-4o', 2);
      expect(recent.map(({ createdAt: _, ...r }) => r)).toEqual([
        {
          model: 'gpt-4o',
          counterId: 'approx:script-aware',
          estimated: 300,
          reported: 330,
          script: null,
          source: 'usage',
          projectId: null,
          masses: null,
        },
        {
          model: 'gpt-4o',
          counterId: 'approx:script-aware',
          estimated: 200,
          reported: 190,
          script: null,
          source: 'usage',
          projectId: null,
          masses: null,
        },
      ]);
    });

    it('keeps the n newest records of each script class, so one long history never crowds out another script', async () => {
      for (let i = 0; i < 5; i += 1)
        await usage.record({ model: 'm-drift', counterId: 'floor', estimated: 100, reported: 130 + i, script: 'cjk' });
      await usage.record({
        model: 'm-drift',
        counterId: 'floor',
        estimated: 100,
        reported: 300,
        script: 'devanagari',
        source: 'overflow',
      });
      await usage.record({ model: 'm-drift', counterId: 'other', estimated: 100, reported: 999, script: 'cjk' });
      const recent = await usage.recentPerScript('m-drift', 'floor', 2);
      expect(recent.map((r) => [r.script, r.reported, r.source])).toEqual([
        ['cjk', 134, 'usage'],
        ['cjk', 133, 'usage'],
        ['devanagari', 300, 'overflow'],
      ]);
    });

    it('keeps each project’s own newest records per class: another project’s asks on the same model never evict them', async () => {
      const projects = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('a'), ('b') RETURNING id`);
      const [a, b] = projects.map((p: { id: string }) => p.id);
      await usage.record({
        model: 'm-shared',
        counterId: 'floor',
        estimated: 100,
        reported: 153,
        script: 'latin',
        projectId: a,
        masses: { latin: [97, 137.5] },
      });
      for (let i = 0; i < 5; i += 1)
        await usage.record({
          model: 'm-shared',
          counterId: 'floor',
          estimated: 100,
          reported: 115 + i,
          script: 'latin',
          projectId: b,
        });
      expect(
        (await usage.recentPerScript('m-shared', 'floor', 2, a)).map((r) => [r.reported, r.projectId, r.masses]),
      ).toEqual([[153, a, { latin: [97, 137.5] }]]);
      expect((await usage.recentPerScript('m-shared', 'floor', 2, b)).map((r) => r.reported)).toEqual([119, 118]);
      // Model-wide (the prior): every project's, newest first.
      expect((await usage.recentPerScript('m-shared', 'floor', 2)).map((r) => r.reported)).toEqual([119, 118]);
      // Both in one statement, as the two reads give them.
      expect(await usage.calibrationRecords('m-shared', 'floor', 2, a)).toEqual({
        calibration: await usage.recentPerScript('m-shared', 'floor', 2, a),
        calibrationPrior: await usage.recentPerScript('m-shared', 'floor', 2),
      });
    });

    it('rejects a negative count', async () => {
      await expect(usage.record({ model: 'm', counterId: 'c', estimated: -1, reported: 1 })).rejects.toThrow(
        /token_usage_records_estimated_check/,
      );
    });
  });
});
