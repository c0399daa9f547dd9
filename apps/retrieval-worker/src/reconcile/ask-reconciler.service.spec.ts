import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { QueueName, type RetrieveJobData } from '@ask/ask-contracts';
import { loadConfig } from '@ask/config';
import { AskEventStream } from '@ask/event-stream';
import { AsksRepository, CredentialsCipher, ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { testRedisUrl } from '@ask/testing';
import { AskReconciler, RECONCILE_MIN_AGE_MS } from './ask-reconciler.service';

// Integration: a throwaway PostgreSQL database, the machine's Redis under a per-run key prefix, real
// BullMQ queues on that prefix.
describe(AskReconciler.name, () => {
  const prefix = `reconcile-test-${randomUUID()}`;
  const DEADLINE_MS = 60_000;
  let db: TestDatabase;
  let redis: Redis;
  let events: AskEventStream;
  let asks: AsksRepository;
  let sessions: SessionsRepository;
  let retrieval: Queue<RetrieveJobData>;
  let synthesis: Queue;
  let reconciler: AskReconciler;
  let projectId: string;
  let sessionId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = testRedisUrl();
    redis = new Redis(url);
    events = new AskEventStream(redis, prefix, 120);
    asks = new AsksRepository(db.dataSource);
    retrieval = new Queue(QueueName.AskRetrieval, { connection: { url }, prefix });
    synthesis = new Queue(QueueName.AskSynthesis, { connection: { url }, prefix });
    const config = loadConfig({ ...process.env, ASK_KEY_PREFIX: prefix, ASK_DEADLINE_MS: String(DEADLINE_MS) });
    sessions = new SessionsRepository(db.dataSource);
    reconciler = new AskReconciler(asks, sessions, events, retrieval, synthesis, config);
    const project = await new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined)).create({ name: 'p' });
    projectId = project.id;
    sessionId = (await sessions.create(projectId, 's')).id;
  });

  afterAll(async () => {
    await Promise.all([retrieval.close(), synthesis.close()]);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await db.drop();
  });

  /** Records an ask accepted `ageMs` ago (PostgreSQL only, as if Redis had lost everything else). */
  async function accepted(ageMs: number): Promise<string> {
    const id = randomUUID();
    await asks.record({
      id,
      projectId,
      sessionId,
      question: 'How do I create an HNSW index?',
      acceptedAt: new Date(Date.now() - ageMs),
    });
    return id;
  }
  const meta = (id: string, acceptedAt: Date) =>
    events.open(id, { projectId, sessionId, acceptedAt: acceptedAt.toISOString() });
  const state = async (id: string) => {
    const r = await asks.find(id);
    return r && { state: r.state, errorCode: r.errorCode, requeues: r.requeues };
  };

  describe('pass', () => {
    it('records an ask whose stream holds its terminal event as ended, with the error code', async () => {
      const done = await accepted(10_000);
      const failed = await accepted(10_000);
      await events.publish(done, 'done', {
        messageId: 'm',
        usage: { promptTokens: 1, completionTokens: 1 },
        sources: [],
      });
      await events.publish(failed, 'error', { status: 413, code: 'context_overflow', error: 'x' });
      await reconciler.pass();
      expect([await state(done), await state(failed)]).toEqual([
        { state: 'done', errorCode: null, requeues: 0 },
        { state: 'error', errorCode: 'context_overflow', requeues: 0 },
      ]);
    });

    it('leaves alone an ask whose job is still waiting, and one younger than the minimum age', async () => {
      const waiting = await accepted(10_000);
      const row = (await asks.find(waiting))!;
      await meta(waiting, row.acceptedAt);
      await synthesis.add('synthesize', {}, { jobId: waiting });
      const young = await accepted(RECONCILE_MIN_AGE_MS - 2_000);
      await reconciler.pass();
      expect([await state(waiting), await state(young)]).toEqual([
        { state: 'accepted', errorCode: null, requeues: 0 },
        { state: 'accepted', errorCode: null, requeues: 0 },
      ]);
      expect(await events.readAll(young)).toEqual([]);
    });

    it('re-opens and re-enqueues an ask Redis lost before its deadline: meta back, reset first, retrieval job waiting', async () => {
      const lost = await accepted(10_000);
      const row = (await asks.find(lost))!;
      const counts = await reconciler.pass();
      expect(counts.requeued).toBeGreaterThanOrEqual(1);
      expect(await events.meta(lost)).toEqual({ projectId, sessionId, acceptedAt: row.acceptedAt.toISOString() });
      expect((await events.readAll(lost)).map((e) => e.type)).toEqual(['reset']);
      const job = await retrieval.getJob(lost);
      expect([await job?.getState(), job?.data]).toEqual([
        'waiting',
        { askId: lost, projectId, sessionId, question: row.question, acceptedAt: row.acceptedAt.toISOString() },
      ]);
      expect(await state(lost)).toEqual({ state: 'accepted', errorCode: null, requeues: 1 });
      // The next pass sees the live job and does nothing more.
      await reconciler.pass();
      expect((await events.readAll(lost)).map((e) => e.type)).toEqual(['reset']);
      expect(await state(lost)).toEqual({ state: 'accepted', errorCode: null, requeues: 1 });
    });

    it('re-enqueues an ask whose meta survived but whose job finished without a terminal event', async () => {
      const stranded = await accepted(10_000);
      const row = (await asks.find(stranded))!;
      await meta(stranded, row.acceptedAt);
      await events.publish(stranded, 'accepted', { askId: stranded, sessionId });
      await retrieval.add('retrieve', row as never, { jobId: stranded });
      const job = (await retrieval.getJob(stranded))!;
      await job.remove();
      await reconciler.pass();
      expect((await events.readAll(stranded)).map((e) => e.type)).toEqual(['accepted', 'reset']);
      expect(await (await retrieval.getJob(stranded))?.getState()).toBe('waiting');
    });

    it('ends an ask Redis lost after its answer was stored from the stored answer: reset, the answer, done; no job', async () => {
      const answered = await accepted(10_000);
      const row = (await asks.find(answered))!;
      const { message } = await sessions.appendMessage({
        projectId,
        sessionId,
        askId: answered,
        question: row.question,
        answer: 'Use CREATE INDEX … USING hnsw.',
        promptTokens: 120,
        completionTokens: 9,
        sources: [{ kind: 'knowledge', id: 'c1', title: 'README' }],
      });
      const counts = await reconciler.pass();
      expect(counts.replayed).toBe(1);
      expect(await events.meta(answered)).toEqual({ projectId, sessionId, acceptedAt: row.acceptedAt.toISOString() });
      expect((await events.readAll(answered)).map((e) => [e.type, e.data])).toEqual([
        ['reset', { attempt: 0, reason: 'answer already stored; resending it' }],
        ['delta', { text: 'Use CREATE INDEX … USING hnsw.' }],
        [
          'done',
          {
            messageId: message.id,
            usage: { promptTokens: 120, completionTokens: 9 },
            sources: [{ kind: 'knowledge', id: 'c1', title: 'README' }],
          },
        ],
      ]);
      expect([await retrieval.getJob(answered), await synthesis.getJob(answered)]).toEqual([undefined, undefined]);
      expect(await state(answered)).toEqual({ state: 'done', errorCode: null, requeues: 0 });
      await reconciler.pass();
      expect(await events.readAll(answered)).toHaveLength(3);
    });

    it('ends an ask Redis lost past its deadline with one typed 504, and records it', async () => {
      const late = await accepted(DEADLINE_MS + 1_000);
      await reconciler.pass();
      const evs = await events.readAll(late);
      expect(
        evs.map((e) => [e.type, (e.data as { status: number }).status, (e.data as { code: string }).code]),
      ).toEqual([['error', 504, 'llm_upstream']]);
      expect(await state(late)).toEqual({ state: 'error', errorCode: 'llm_upstream', requeues: 0 });
      expect(await retrieval.getJob(late)).toBeUndefined();
      await reconciler.pass();
      expect(await events.readAll(late)).toHaveLength(1);
    });
  });
});
