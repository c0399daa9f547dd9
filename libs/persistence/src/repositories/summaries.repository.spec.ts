import { CredentialsCipher } from '../credentials-cipher';
import { createTestDatabase, type TestDatabase } from '../testing';
import { ProjectsRepository } from './projects.repository';
import { SessionsRepository } from './sessions.repository';
import { SummariesRepository } from './summaries.repository';

describe(SummariesRepository.name, () => {
  let db: TestDatabase;
  let sessions: SessionsRepository;
  let summaries: SummariesRepository;
  let projectId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    sessions = new SessionsRepository(db.dataSource);
    summaries = new SummariesRepository(db.dataSource);
    projectId = (await new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined)).create({ name: 'p' }))
      .id;
  });
  afterAll(() => db.drop());

  async function sessionWith(n: number) {
    const session = await sessions.create(projectId);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        (
          await sessions.appendMessage({
            projectId,
            sessionId: session.id,
            askId: `${session.id}-${i}`,
            question: `q${i}`,
            answer: `a${i}`,
          })
        ).message.id,
      );
    }
    return { sessionId: session.id, ids };
  }

  const turn = (messageId: string, text = 'Ingrid chose Frankfurt.') => ({
    messageId,
    text,
    tokenCounts: { 'tiktoken:o200k_base': 5 },
    provider: 'local',
    model: 'extractive',
  });

  describe('saveTurnSummary', () => {
    it('stores one summary beside the message and keeps the first on a retry; the message is unchanged', async () => {
      const { sessionId, ids } = await sessionWith(2);
      expect(await summaries.saveTurnSummary(turn(ids[0]))).toBe(true);
      expect(await summaries.saveTurnSummary(turn(ids[0], 'another text'))).toBe(false);
      const stored = await summaries.turnSummaries(sessionId);
      expect([...stored.keys()]).toEqual([ids[0]]);
      expect(stored.get(ids[0])).toMatchObject({
        text: 'Ingrid chose Frankfurt.',
        tokenCounts: { 'tiktoken:o200k_base': 5 },
        provider: 'local',
        model: 'extractive',
      });
      expect((await sessions.history(sessionId)).map((m) => [m.question, m.answer])).toEqual([
        ['q0', 'a0'],
        ['q1', 'a1'],
      ]);
    });

    it.each(['', '   \n'])('refuses blank text %p before the database', async (text) => {
      const { ids } = await sessionWith(1);
      await expect(summaries.saveTurnSummary(turn(ids[0], text))).rejects.toThrow(RangeError);
      expect(
        await db.dataSource.query('SELECT count(*)::int AS n FROM turn_summaries WHERE message_id = $1', [ids[0]]),
      ).toEqual([{ n: 0 }]);
    });

    it('the database itself refuses a blank summary', async () => {
      const { sessionId, ids } = await sessionWith(1);
      await expect(
        db.dataSource.query(
          `INSERT INTO turn_summaries (message_id, session_id, text, provider, model) VALUES ($1, $2, ' ', 'x', 'y')`,
          [ids[0], sessionId],
        ),
      ).rejects.toThrow(/check/i);
    });

    it('stores nothing for a deleted session, and deleting a session deletes its summaries', async () => {
      const { sessionId, ids } = await sessionWith(2);
      await summaries.saveTurnSummary(turn(ids[0]));
      await sessions.delete(projectId, sessionId);
      expect(await summaries.saveTurnSummary(turn(ids[1]))).toBe(false);
      expect((await summaries.turnSummaries(sessionId)).size).toBe(0);
    });

    it('merges counts under another counter id', async () => {
      const { sessionId, ids } = await sessionWith(1);
      await summaries.saveTurnSummary(turn(ids[0]));
      await summaries.addTurnSummaryCounts([{ messageId: ids[0], tokenCounts: { 'hf:llama3': 6 } }]);
      expect((await summaries.turnSummaries(sessionId)).get(ids[0])?.tokenCounts).toEqual({
        'tiktoken:o200k_base': 5,
        'hf:llama3': 6,
      });
    });
  });

  describe('saveTurnSummary with its call', () => {
    const call = (sessionId: string, messageId: string) => ({
      projectId,
      sessionId,
      messageId,
      kind: 'turn' as const,
      provider: 'local',
      model: 'extractive',
      promptTokens: 0,
      completionTokens: 0,
      cacheReadTokens: null,
    });
    const outcomes = async () =>
      (await summaries.calls(projectId)).map((c) => [c.messageId, c.outcome, c.promptTokens, c.cacheReadTokens]);

    it('stores the summary and its call row (stored) in one statement; a second write records gone', async () => {
      const { sessionId, ids } = await sessionWith(1);
      const before = await outcomes();
      expect(await summaries.saveTurnSummary(turn(ids[0]), call(sessionId, ids[0]))).toBe(true);
      expect(await summaries.saveTurnSummary(turn(ids[0], 'another text'), call(sessionId, ids[0]))).toBe(false);
      expect((await summaries.turnSummaries(sessionId)).get(ids[0])?.text).toBe('Ingrid chose Frankfurt.');
      expect((await outcomes()).slice(before.length)).toEqual([
        [ids[0], 'stored', 0, null],
        [ids[0], 'gone', 0, null],
      ]);
    });

    it('a deleted session: no summary, the call row says gone', async () => {
      const { sessionId, ids } = await sessionWith(1);
      await sessions.delete(projectId, sessionId);
      const before = await outcomes();
      expect(await summaries.saveTurnSummary(turn(ids[0]), call(sessionId, ids[0]))).toBe(false);
      expect((await outcomes()).slice(before.length)).toEqual([[ids[0], 'gone', 0, null]]);
    });
  });

  describe('saveSessionSummary', () => {
    const session = (sessionId: string, coversUpTo: string, coversTurns: number, text = `turns 1–${coversTurns}`) => ({
      sessionId,
      text,
      coversUpTo,
      coversTurns,
      tokenCounts: { 'tiktoken:o200k_base': 7 },
      provider: 'local',
      model: 'extractive',
      rollingUpdates: coversTurns - 1,
    });

    it('moves forward only: a summary covering fewer pairs never replaces one covering more', async () => {
      const { sessionId, ids } = await sessionWith(5);
      expect(await summaries.saveSessionSummary(session(sessionId, ids[1], 2))).toBe(true);
      expect(await summaries.saveSessionSummary(session(sessionId, ids[3], 4))).toBe(true);
      expect(await summaries.saveSessionSummary(session(sessionId, ids[2], 3))).toBe(false);
      expect(await summaries.sessionSummary(sessionId)).toMatchObject({
        text: 'turns 1–4',
        coversUpTo: ids[3],
        coversTurns: 4,
        rollingUpdates: 3,
      });
    });

    it('refuses a covered message of another session and blank text', async () => {
      const a = await sessionWith(1);
      const b = await sessionWith(1);
      expect(await summaries.saveSessionSummary(session(a.sessionId, b.ids[0], 1))).toBe(false);
      await expect(summaries.saveSessionSummary(session(a.sessionId, a.ids[0], 1, ' '))).rejects.toThrow(RangeError);
      expect(await summaries.sessionSummary(a.sessionId)).toBeNull();
    });
  });

  describe('recordCall', () => {
    it('keeps one usage row per call, also after the session is deleted', async () => {
      const { sessionId, ids } = await sessionWith(1);
      await summaries.recordCall({
        projectId,
        sessionId,
        messageId: ids[0],
        kind: 'turn',
        provider: 'openai',
        model: 'gpt-4o-mini',
        promptTokens: 120,
        completionTokens: 30,
        cacheReadTokens: null,
        outcome: 'stored',
      });
      await summaries.recordCall({
        projectId,
        sessionId,
        messageId: null,
        kind: 'session',
        provider: 'openai',
        model: 'gpt-4o-mini',
        promptTokens: null,
        completionTokens: null,
        cacheReadTokens: null,
        outcome: 'timeout',
      });
      await sessions.delete(projectId, sessionId);
      const calls = (await summaries.calls(projectId)).filter((c) => c.sessionId === sessionId);
      expect(calls.map((c) => [c.kind, c.promptTokens, c.completionTokens, c.outcome])).toEqual([
        ['turn', 120, 30, 'stored'],
        ['session', null, null, 'timeout'],
      ]);
    });
  });
});
