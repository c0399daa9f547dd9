import { Test } from '@nestjs/testing';
import { CredentialsCipher } from './credentials-cipher';
import { PersistenceModule, REPOSITORIES } from './persistence.module';
import { ProjectsRepository, SessionsRepository } from './repositories';
import { createTestDatabase, type TestDatabase } from './testing';

describe(PersistenceModule.name, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  describe('forRoot', () => {
    it('provides every repository on a working DataSource', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          PersistenceModule.forRoot({
            config: { DATABASE_URL: db.url, ASK_ENCRYPTION_KEY: 'e'.repeat(64) },
            poolSize: 2,
          }),
        ],
      }).compile();
      try {
        for (const repository of REPOSITORIES) expect(moduleRef.get(repository)).toBeInstanceOf(repository);
        expect(moduleRef.get(CredentialsCipher).hasKey).toBe(true);
        const project = await moduleRef.get(ProjectsRepository).create({ name: 'via Nest' });
        const session = await moduleRef.get(SessionsRepository).create(project.id);
        expect(session.projectId).toBe(project.id);
      } finally {
        await moduleRef.close();
      }
    });
  });
});
