import { randomUUID } from 'node:crypto';
import { CredentialsCipher } from '../credentials-cipher';
import { createTestDatabase, type TestDatabase } from '../testing';
import { AsksRepository } from './asks.repository';
import { ProjectsRepository } from './projects.repository';
import { SessionsRepository } from './sessions.repository';

describe(AsksRepository.name, () => {
  let db: TestDatabase;
  let asks: AsksRepository;
  let sessions: SessionsRepository;
  let projectId: string;
  let otherProjectId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    asks = new AsksRepository(db.dataSource);
    sessions = new SessionsRepository(db.dataSource);
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectId = (await projects.create({ name: 'a' })).id;
    otherProjectId = (await projects.create({ name: 'b' })).id;
  });
  afterAll(() => db.drop());

  const rowsOf = async (id: string) =>
    db.dataSource.query('SELECT project_id, session_id, question, state FROM asks WHERE id = $1', [id]);

  describe('recordInSession', () => {
    it('records the ask when the session is the project’s', async () => {
      const sessionId = (await sessions.create(projectId, 't')).id;
      const id = randomUUID();
      expect(await asks.recordInSession({ id, projectId, sessionId, question: 'Q?', acceptedAt: new Date() })).toBe(
        true,
      );
      expect(await rowsOf(id)).toEqual([
        { project_id: projectId, session_id: sessionId, question: 'Q?', state: 'accepted' },
      ]);
    });

    it('records nothing and returns false for a session of another project, an unknown session or a non-UUID', async () => {
      const foreign = (await sessions.create(otherProjectId, 't')).id;
      for (const sessionId of [foreign, randomUUID(), 'not-a-uuid']) {
        const id = randomUUID();
        expect(await asks.recordInSession({ id, projectId, sessionId, question: 'Q?', acceptedAt: new Date() })).toBe(
          false,
        );
        expect(await rowsOf(id)).toEqual([]);
      }
    });
  });

  describe('recordInNewSession', () => {
    it('creates the session with its title and records the ask in it, in one statement', async () => {
      const id = randomUUID();
      const sessionId = await asks.recordInNewSession(
        { id, projectId, question: 'First?', acceptedAt: new Date() },
        'First?',
      );
      expect(await sessions.findForProject(projectId, sessionId)).toMatchObject({
        id: sessionId,
        projectId,
        title: 'First?',
      });
      expect(await rowsOf(id)).toEqual([
        { project_id: projectId, session_id: sessionId, question: 'First?', state: 'accepted' },
      ]);
    });

    it('throws for an unknown project and leaves no session behind', async () => {
      const unknown = randomUUID();
      await expect(
        asks.recordInNewSession({ id: randomUUID(), projectId: unknown, question: 'Q?', acceptedAt: new Date() }, 'x'),
      ).rejects.toThrow();
      expect(
        await db.dataSource.query('SELECT count(*)::int AS n FROM ask_sessions WHERE project_id = $1', [unknown]),
      ).toEqual([{ n: 0 }]);
    });
  });
});
