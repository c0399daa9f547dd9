import { CredentialsCipher } from '../credentials-cipher';
import { createTestDatabase, type TestDatabase } from '../testing';
import { LearnedWindowsRepository } from './learned-windows.repository';
import { ProjectsRepository } from './projects.repository';

describe(LearnedWindowsRepository.name, () => {
  let db: TestDatabase;
  let windows: LearnedWindowsRepository;
  let projects: ProjectsRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    windows = new LearnedWindowsRepository(db.dataSource);
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
  });
  afterAll(() => db.drop());

  describe('remember / find / list / forget', () => {
    it('keeps the smallest window disclosed per project and model', async () => {
      const { id } = await projects.create({ name: 'w' });
      await windows.remember(id, 'openai', 'mystery', 8192);
      await windows.remember(id, 'openai', 'mystery', 16384);
      await windows.remember(id, 'openai', 'other', 4096);
      expect((await windows.find(id, 'openai', 'mystery'))?.window).toBe(8192);
      await windows.remember(id, 'openai', 'mystery', 8000);
      expect((await windows.list(id)).map((w) => [w.provider, w.model, w.window])).toEqual([
        ['openai', 'mystery', 8000],
        ['openai', 'other', 4096],
      ]);
      expect(await windows.forget(id)).toBe(2);
      expect(await windows.find(id, 'openai', 'mystery')).toBeUndefined();
    });
  });
});
