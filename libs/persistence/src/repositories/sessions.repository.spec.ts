import { Client } from 'pg';
import { CredentialsCipher } from '../credentials-cipher';
import { SessionNotFoundError } from '../errors';
import { createTestDatabase, type TestDatabase } from '../testing';
import { ProjectsRepository } from './projects.repository';
import { SessionsRepository } from './sessions.repository';
import { SummariesRepository } from './summaries.repository';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe(SessionsRepository.name, () => {
  let db: TestDatabase;
  let sessions: SessionsRepository;
  let projectA: string;
  let projectB: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    sessions = new SessionsRepository(db.dataSource);
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectA = (await projects.create({ name: 'A' })).id;
    projectB = (await projects.create({ name: 'B' })).id;
  });
  afterAll(() => db.drop());

  const append = (sessionId: string, askId: string, projectId = projectA) =>
    sessions.appendMessage({ projectId, sessionId, askId, question: `q ${askId}`, answer: `a ${askId}` });

  describe('create', () => {
    it('creates a session of the project', async () => {
      const session = await sessions.create(projectA, 'First');
      expect(session).toMatchObject({ projectId: projectA, title: 'First' });
    });

    it('fails for an unknown project', async () => {
      await expect(sessions.create(UNKNOWN_ID)).rejects.toThrow(/foreign key/);
    });
  });

  describe('findForProject', () => {
    it("finds the project's own session and never another project's", async () => {
      const session = await sessions.create(projectA);
      expect((await sessions.findForProject(projectA, session.id))?.id).toBe(session.id);
      expect(await sessions.findForProject(projectB, session.id)).toBeNull();
      expect(await sessions.findForProject(projectA, 'not-a-uuid')).toBeNull();
    });
  });

  describe('appendMessage', () => {
    it('stores one row when called twice with the same ask id, and returns the stored row both times', async () => {
      const session = await sessions.create(projectA);
      const first = await sessions.appendMessage({
        projectId: projectA,
        sessionId: session.id,
        askId: 'ask-dup',
        question: 'What is HNSW?',
        answer: 'A graph index.',
        tokenCounts: { 'tiktoken:o200k_base': { question: 5, answer: 4 } },
        promptTokens: 812,
        completionTokens: 37,
        provider: 'openai',
        model: 'gpt-4o',
      });
      const second = await sessions.appendMessage({
        projectId: projectA,
        sessionId: session.id,
        askId: 'ask-dup',
        question: 'retry',
        answer: 'other',
      });
      expect(first.inserted).toBe(true);
      expect(second.inserted).toBe(false);
      expect(second.message).toEqual(first.message);
      expect(first.message).toMatchObject({
        askId: 'ask-dup',
        question: 'What is HNSW?',
        answer: 'A graph index.',
        status: 'complete',
        tokenCounts: { 'tiktoken:o200k_base': { question: 5, answer: 4 } },
        promptTokens: 812,
        completionTokens: 37,
        provider: 'openai',
        model: 'gpt-4o',
      });
      const [{ n }] = await db.dataSource.query(
        'SELECT count(*)::int AS n FROM ask_session_messages WHERE ask_id = $1',
        ['ask-dup'],
      );
      expect(n).toBe(1);
    });

    it('stores a pair, bumps its session and returns the row in one statement (no transaction)', async () => {
      const session = await sessions.create(projectA);
      // Every statement on the wire, whichever path sends it (TypeORM's query runner or pgQuery).
      const query = jest.spyOn(Client.prototype, 'query');
      const transaction = jest.spyOn(db.dataSource, 'transaction');
      try {
        const first = await append(session.id, 'ask-one-trip');
        const again = await append(session.id, 'ask-one-trip');
        expect([first.inserted, again.inserted]).toEqual([true, false]);
        expect(again.message).toEqual(first.message);
        expect(query).toHaveBeenCalledTimes(2);
        expect(transaction).not.toHaveBeenCalled();
      } finally {
        query.mockRestore();
        transaction.mockRestore();
      }
      const [row] = await db.dataSource.query(
        'SELECT s.updated_at > s.created_at AS bumped FROM ask_sessions s WHERE s.id = $1',
        [session.id],
      );
      expect(row.bumped).toBe(true);
    });

    it('stores one row under concurrent attempts of the same ask', async () => {
      const session = await sessions.create(projectA);
      const results = await Promise.all([1, 2, 3, 4].map(() => append(session.id, 'ask-race')));
      expect(results.filter((r) => r.inserted)).toHaveLength(1);
      expect(new Set(results.map((r) => r.message.id)).size).toBe(1);
    });

    it('refuses a session of another project (and stores nothing)', async () => {
      const session = await sessions.create(projectA);
      await expect(append(session.id, 'ask-foreign', projectB)).rejects.toThrow(SessionNotFoundError);
      expect(await sessions.history(session.id)).toEqual([]);
    });

    it('refuses an unknown session', async () => {
      await expect(append(UNKNOWN_ID, 'ask-nowhere')).rejects.toThrow(SessionNotFoundError);
    });

    it("does not reveal another project's pair stored under the same ask id", async () => {
      const sessionA = await sessions.create(projectA);
      const sessionB = await sessions.create(projectB);
      await append(sessionA.id, 'ask-shared');
      await expect(append(sessionB.id, 'ask-shared', projectB)).rejects.toThrow(SessionNotFoundError);
    });
  });

  describe('historyForProject', () => {
    it("returns the project's own session's pairs oldest first, [] when it has none, null otherwise", async () => {
      const session = await sessions.create(projectA);
      expect(await sessions.historyForProject(projectA, session.id)).toEqual([]);
      for (const askId of ['p1', 'p2', 'p3']) await append(session.id, askId);
      const pairs = await sessions.historyForProject(projectA, session.id);
      expect(pairs).toEqual(await sessions.history(session.id));
      expect(pairs?.map((m) => m.askId)).toEqual(['p1', 'p2', 'p3']);
      expect(await sessions.historyForProject(projectB, session.id)).toBeNull();
      expect(await sessions.historyForProject(projectA, UNKNOWN_ID)).toBeNull();
      expect(await sessions.historyForProject(projectA, 'not-a-uuid')).toBeNull();
    });
  });

  describe('historyWithTurnSummaries', () => {
    it('returns the pairs as history does without budget and sources, and their summaries by message id, in one query', async () => {
      const summaries = new SummariesRepository(db.dataSource);
      const session = await sessions.create(projectA);
      expect(await sessions.historyWithTurnSummaries(projectA, session.id)).toEqual({
        pairs: [],
        turnSummaries: new Map(),
      });
      for (const askId of ['w1', 'w2']) await append(session.id, askId);
      await sessions.appendMessage({
        projectId: projectA,
        sessionId: session.id,
        askId: 'w3',
        question: 'q w3',
        answer: 'a w3',
        sources: [{ kind: 'chunk', id: 'c1', title: 'Manual', source: 'manual.md' }],
      });
      const [first, , third] = await sessions.history(session.id);
      expect(third.sources).toHaveLength(1);
      for (const m of [first, third])
        await summaries.saveTurnSummary({
          messageId: m.id,
          text: `summary of ${m.askId}`,
          tokenCounts: { 'tiktoken:o200k_base': 4 },
          provider: 'local',
          model: 'extractive',
        });
      const query = jest.spyOn(Client.prototype, 'query');
      let read: Awaited<ReturnType<SessionsRepository['historyWithTurnSummaries']>>;
      try {
        read = await sessions.historyWithTurnSummaries(projectA, session.id);
        expect(query).toHaveBeenCalledTimes(1);
        // The stored budget and sources columns are neither read nor returned (the session API's read keeps them).
        const sql = JSON.stringify(query.mock.calls[0][0]);
        expect(sql).toMatch(/token_counts/);
        expect(sql).not.toMatch(/budget|sources/);
      } finally {
        query.mockRestore();
      }
      expect(read?.pairs).toStrictEqual(
        (await sessions.history(session.id)).map(({ budget: _budget, sources: _sources, ...pair }) => pair),
      );
      expect(read?.turnSummaries).toEqual(await summaries.turnSummaries(session.id));
      expect([...(read?.turnSummaries.keys() ?? [])].sort()).toEqual([first.id, third.id].sort());
      expect(await sessions.historyWithTurnSummaries(projectB, session.id)).toBeNull();
      expect(await sessions.historyWithTurnSummaries(projectA, UNKNOWN_ID)).toBeNull();
    });
  });

  describe('history', () => {
    it('returns the pairs oldest first, and the newest `limit` when given', async () => {
      const session = await sessions.create(projectA);
      for (const askId of ['h1', 'h2', 'h3', 'h4']) await append(session.id, askId);
      expect((await sessions.history(session.id)).map((m) => m.askId)).toEqual(['h1', 'h2', 'h3', 'h4']);
      expect((await sessions.history(session.id, { limit: 2 })).map((m) => m.askId)).toEqual(['h3', 'h4']);
    });

    it('orders pairs stored in the same instant by insertion', async () => {
      const session = await sessions.create(projectA);
      await db.dataSource.transaction(async (m) => {
        for (const askId of ['t1', 't2', 't3']) {
          await m.query(
            `INSERT INTO ask_session_messages (session_id, ask_id, question, answer) VALUES ($1, $2, 'q', 'a')`,
            [session.id, askId],
          );
        }
      });
      expect((await sessions.history(session.id)).map((m) => m.askId)).toEqual(['t1', 't2', 't3']);
    });
  });

  describe('setTokenCounts', () => {
    it('adds a counter without touching the others', async () => {
      const session = await sessions.create(projectA);
      await sessions.appendMessage({
        projectId: projectA,
        sessionId: session.id,
        askId: 'c1',
        question: 'q',
        answer: 'a',
        tokenCounts: { old: { question: 1, answer: 2 } },
      });
      await append(session.id, 'c2');
      const [m1, m2] = await sessions.history(session.id);
      expect(
        await sessions.setTokenCounts([m1.id, m2.id], 'approx:script-aware', [
          { question: 10, answer: 20 },
          { question: 30, answer: 40 },
        ]),
      ).toBe(2);
      expect((await sessions.history(session.id)).map((m) => m.tokenCounts)).toEqual([
        { old: { question: 1, answer: 2 }, 'approx:script-aware': { question: 10, answer: 20 } },
        { 'approx:script-aware': { question: 30, answer: 40 } },
      ]);
    });

    it('rejects arrays of different lengths', async () => {
      await expect(sessions.setTokenCounts([UNKNOWN_ID], 'x', [])).rejects.toThrow(RangeError);
    });
  });

  describe('list', () => {
    it("lists the project's sessions, most recently active first, with message counts", async () => {
      const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
      const project = (await projects.create({ name: 'List' })).id;
      const older = await sessions.create(project, 'older');
      const newer = await sessions.create(project, 'newer');
      await sessions.appendMessage({
        projectId: project,
        sessionId: older.id,
        askId: 'l1',
        question: 'q',
        answer: 'a',
      });
      await sessions.appendMessage({
        projectId: project,
        sessionId: older.id,
        askId: 'l2',
        question: 'q',
        answer: 'a',
      });
      const listed = await sessions.list(project);
      expect(listed.map((s) => [s.title, s.messageCount])).toEqual([
        ['older', 2],
        ['newer', 0],
      ]);
      expect(listed.map((s) => s.id)).toEqual([older.id, newer.id]);
      expect(await sessions.list(UNKNOWN_ID)).toEqual([]);
    });
  });

  describe('delete', () => {
    it("deletes the project's session with its messages, never another project's", async () => {
      const session = await sessions.create(projectA);
      await append(session.id, 'd1');
      expect(await sessions.delete(projectB, session.id)).toBe(false);
      expect(await sessions.delete(projectA, session.id)).toBe(true);
      expect(await sessions.findForProject(projectA, session.id)).toBeNull();
      expect(await db.dataSource.query(`SELECT id FROM ask_session_messages WHERE ask_id = 'd1'`)).toEqual([]);
    });
  });
});
