import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { AskEvent, BudgetEvent, DoneEvent, RetrievedItem } from '@ask/ask-contracts';
import type { AskEventStream } from '@ask/event-stream';
import type { FakeUpstream } from '@ask/fake-upstream';
import type { ProjectsRepository, SessionsRepository, UsageRepository } from '@ask/persistence';
import type { TestDatabase } from '@ask/persistence/testing';
import { selectTokenCounter } from '@ask/token-counting';
import { resolveModel } from '@ask/model-catalog';
import { SynthesisService } from './synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

// Integration: the real SynthesisService on a throwaway PostgreSQL database, the machine's Redis (own
// key prefix), the local stand-in and the fake Ollama upstream on loopback.
describe(SynthesisService.name, () => {
  // The first asks load tokenizers (o200k_base, Llama 3): seconds on a loaded machine.
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  let db: TestDatabase;
  let redis: Redis;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let service: SynthesisService;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let usage: UsageRepository;
  let prefix: string;

  const items: RetrievedItem[] = [
    {
      id: 'k1',
      kind: 'knowledge',
      title: 'HNSW',
      text: 'An HNSW index creates a multilayer graph with better query performance.',
      score: 0.8,
    },
  ];

  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'synth-test' });
    ({ prefix, db, redis, upstream, events, projects, sessions, usage, synthesis: service } = harness);
  });

  afterAll(() => harness.close());

  async function newProject(llm: Parameters<ProjectsRepository['create']>[0]['llmSettings']) {
    const project = await projects.create({
      name: 'p',
      llmSettings: llm,
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    const session = await sessions.create(project.id, 's');
    return { projectId: project.id, sessionId: session.id };
  }

  /** Opens the ask's meta as the gateway does (a run needs it to claim the ask). */
  const open = (askId: string, ids: { projectId: string; sessionId: string }) =>
    events.open(askId, { ...ids, acceptedAt: new Date().toISOString() });

  async function ask(
    ids: { projectId: string; sessionId: string },
    question: string,
    attempt = 1,
    askId = randomUUID(),
  ) {
    await open(askId, ids);
    await service.synthesize({ askId, ...ids, question, acceptedAt: new Date().toISOString(), items }, { attempt });
    return { askId, events: await events.readAll(askId) };
  }

  /** A service whose local stand-in pauses between chunks, so a test can act mid-answer. */
  const slowService = () => harness.service({ env: { LOCAL_LLM_CHUNK_DELAY_MS: '30' } });

  /** Resolves once the ask's stream holds `n` deltas. */
  async function deltas(askId: string, n: number): Promise<void> {
    while ((await events.readAll(askId)).filter((e) => e.type === 'delta').length < n)
      await new Promise((r) => setTimeout(r, 10));
  }

  const rows = async (askId: string) =>
    (await db.dataSource.query('SELECT answer FROM ask_session_messages WHERE ask_id = $1', [askId])) as Array<{
      answer: string;
    }>;

  const budgetOf = (evs: AskEvent[]) => evs.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent);

  describe('synthesize', () => {
    it('stores the pair once with its counts cached under the counter id', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const { askId, events: evs } = await ask(ids, 'Which index is faster?');
      expect(evs.map((e) => e.type).filter((t, i, a) => !(t === 'delta' && a[i - 1] === 'delta'))).toEqual([
        'budget',
        'delta',
        'done',
      ]);
      const [row] = await db.dataSource.query(
        'SELECT answer, token_counts FROM ask_session_messages WHERE ask_id = $1',
        [askId],
      );
      const counter = selectTokenCounter({ provider: 'local', model: 'local' }, 'o200k_base').counter;
      expect(row.token_counts).toEqual({
        'tiktoken:o200k_base': {
          question: counter.countText('Which index is faster?'),
          answer: counter.countText(row.answer),
        },
      });
      expect(budgetOf(evs)[0]).toMatchObject({ counter: 'exact', counterId: 'tiktoken:o200k_base', calibration: 1 });
    });

    it('lists one source per page, its best chunk first, in the done event and the stored message', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const chunk = (id: string, source: string, title: string, score: number): RetrievedItem => ({
        id,
        kind: 'knowledge',
        title,
        source,
        text: `${title}: an index on a column speeds up lookups (${id}).`,
        score,
      });
      // Best first, as retrieval ranks them: three chunks of the HNSW page around one of IVFFlat's.
      const ranked = [
        chunk('hnsw-2', 'kb/hnsw.md', 'HNSW', 0.9),
        chunk('hnsw-0', 'kb/hnsw.md', 'HNSW', 0.8),
        chunk('ivf-1', 'kb/ivfflat.md', 'IVFFlat', 0.7),
        chunk('hnsw-5', 'kb/hnsw.md', 'HNSW', 0.6),
      ];
      const askId = randomUUID();
      await open(askId, ids);
      await service.synthesize(
        {
          askId,
          ...ids,
          question: 'Which index speeds up lookups?',
          acceptedAt: new Date().toISOString(),
          items: ranked,
        },
        { attempt: 1 },
      );
      const done = (await events.readAll(askId)).find((e) => e.type === 'done')?.data as DoneEvent;
      const perPage = [
        { kind: 'knowledge', id: 'hnsw-2', title: 'HNSW', source: 'kb/hnsw.md' },
        { kind: 'knowledge', id: 'ivf-1', title: 'IVFFlat', source: 'kb/ivfflat.md' },
      ];
      expect(done.sources).toEqual(perPage);
      expect((await sessions.findByAsk(ids.projectId, askId))?.sources).toEqual(perPage);
    });

    it('counts old messages once with the new counter after a model switch, and stores them', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const first = await ask(ids, 'What is an HNSW index?');
      await projects.updateSettings(ids.projectId, {
        llmSettings: { provider: 'ollama', model: 'llama3.1:8b', baseUrl: upstream.url },
      });
      const second = await ask(ids, 'And how fast is it?');
      expect(budgetOf(second.events)[0]).toMatchObject({ counter: 'exact', counterId: 'hf:llama3', turnsKept: 1 });
      const rows = await db.dataSource.query(
        'SELECT ask_id, question, answer, token_counts FROM ask_session_messages WHERE session_id = $1 ORDER BY created_at',
        [ids.sessionId],
      );
      const llama = selectTokenCounter(
        { provider: 'ollama', model: 'llama3.1:8b' },
        resolveModel({ provider: 'ollama', model: 'llama3.1:8b' }).tokenizer,
      ).counter;
      expect(rows[0].ask_id).toBe(first.askId);
      expect(Object.keys(rows[0].token_counts).sort()).toEqual(['hf:llama3', 'tiktoken:o200k_base']);
      expect(rows[0].token_counts['hf:llama3']).toEqual({
        question: llama.countText(rows[0].question),
        answer: llama.countText(rows[0].answer),
      });
      expect(Object.keys(rows[1].token_counts)).toEqual(['hf:llama3']);
    });

    it('calibrates the approximate estimate per script class from reported usage, and records each call with its class', async () => {
      const model = 'mystery-model:7b';
      const ids = await newProject({ provider: 'ollama', model, baseUrl: upstream.url });
      // Before 4 requests' worth of a class: the script-aware estimate, uncalibrated.
      const before = await ask(ids, 'What is an HNSW index?');
      expect(budgetOf(before.events)[0]).toMatchObject({
        counter: 'approximate',
        counterId: 'approx:script-v1',
        calibration: 1,
        calibrationByScript: {},
      });
      for (let i = 0; i < 30; i += 1)
        await usage.record({
          model,
          counterId: 'approx:script-v1-floor',
          estimated: 1000,
          reported: 1250,
          script: 'latin',
          projectId: ids.projectId,
        });
      const { events: evs } = await ask(ids, 'What is an HNSW index?');
      expect(budgetOf(evs)[0]).toMatchObject({
        counter: 'approximate',
        counterId: 'approx:script-v1+calibration',
        calibration: 1.25,
        calibrationByScript: { latin: 1.25 },
        window: 128_000,
        // 30 records at exactly 1.25: no spread, so the margin is the 5% floor, not the seed's 15%.
        margin: 6_400,
        marginPercent: 5,
        marginBasis: 'calibrated',
      });
      const done = evs.find((e) => e.type === 'done')?.data as DoneEvent;
      expect(done.usage.promptTokens).toBeGreaterThan(0);
      // Each call's own usage was recorded, as the floor's estimate of what was sent, with its class.
      const recent = await usage.recent(model, 100);
      expect(recent.length).toBe(32);
      expect(recent.slice(0, 2).map((r) => [r.counterId, r.script, r.source])).toEqual([
        ['approx:script-v1-floor', 'latin', 'usage'],
        ['approx:script-v1-floor', 'latin', 'usage'],
      ]);
      expect(recent[0].reported).toBe(done.usage.promptTokens);
      // A question in a script without evidence plans with the uncalibrated estimate for its own text.
      const hindi = await ask(ids, 'एचएनएसडब्ल्यू इंडेक्स क्या है और यह कैसे काम करता है?');
      const plan = budgetOf(hindi.events)[0];
      expect(plan).toMatchObject({ counterId: 'approx:script-v1+calibration', calibrationByScript: { latin: 1.25 } });
      expect(hindi.events.at(-1)?.type).toBe('done');
    });

    it.each([
      [
        'maxTokens equal to the window',
        { provider: 'local', model: 'local', maxTokens: 8192 },
        'model=local window=8192 maxTokens=8192 reserve=600 margin=410 available=-1010',
      ],
      [
        'a cap of 1,024 under the default maxTokens',
        { provider: 'local', model: 'local', maxContextTokens: 1024 },
        'model=local window=1024 maxTokens=2048 reserve=600 margin=52 available=-1676',
      ],
    ] as const)(
      'ends an ask on stored settings that no longer fit (%s) with one typed 413 and stores nothing',
      async (_label, llm, details) => {
        const ids = await newProject({ ...llm });
        const { askId, events: evs } = await ask(ids, 'What is an HNSW index?');
        expect(evs.map((e) => [e.type, e.data])).toEqual([
          ['error', { status: 413, code: 'context_overflow', error: expect.any(String), details }],
        ]);
        expect(
          (
            await db.dataSource.query('SELECT count(*)::int AS n FROM ask_session_messages WHERE ask_id = $1', [askId])
          )[0].n,
        ).toBe(0);
      },
    );

    it('resends a stored answer on a retried attempt instead of storing twice', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const first = await ask(ids, 'What is an HNSW index?');
      await redis.del(`${prefix}:ask:${first.askId}:events`);
      const retried = await ask(ids, 'What is an HNSW index?', 2, first.askId);
      const [row] = await db.dataSource.query('SELECT id, answer FROM ask_session_messages WHERE ask_id = $1', [
        first.askId,
      ]);
      expect(retried.events.map((e) => e.type)).toEqual(['reset', 'delta', 'done']);
      expect((retried.events[1].data as { text: string }).text).toBe(row.answer);
      expect((retried.events[2].data as DoneEvent).messageId).toBe(row.id);
      expect(
        (
          await db.dataSource.query('SELECT count(*)::int AS n FROM ask_session_messages WHERE ask_id = $1', [
            first.askId,
          ])
        )[0].n,
      ).toBe(1);
    });

    it('replays a stored answer on a first attempt (Redis lost the ask after done) without calling the provider', async () => {
      const ids = await newProject({ provider: 'ollama', model: 'llama3.1:8b', baseUrl: upstream.url });
      const first = await ask(ids, 'What is an HNSW index?');
      const calls = upstream.requests.length;
      // As after FLUSHALL: stream and meta gone, the reconciler (or a test) re-opens the meta, run 1 again.
      await redis.del(`${prefix}:ask:${first.askId}:events`, `${prefix}:ask:${first.askId}:meta`);
      const again = await ask(ids, 'What is an HNSW index?', 1, first.askId);
      const [row] = await db.dataSource.query('SELECT id, answer FROM ask_session_messages WHERE ask_id = $1', [
        first.askId,
      ]);
      expect(upstream.requests.length - calls).toBe(0);
      expect(again.events.map((e) => e.type)).toEqual(['reset', 'delta', 'done']);
      expect([(again.events[1].data as { text: string }).text, (again.events[2].data as DoneEvent).messageId]).toEqual([
        row.answer,
        row.id,
      ]);
    });

    it('tells clients to discard text a crashed attempt streamed before streaming again', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const askId = randomUUID();
      await open(askId, ids);
      await events.publish(askId, 'budget', {} as BudgetEvent);
      await events.publish(askId, 'delta', { text: 'half an ans' });
      const retried = await ask(ids, 'What is an HNSW index?', 2, askId);
      const types = retried.events.map((e) => e.type);
      expect(types.slice(0, 4)).toEqual(['budget', 'delta', 'reset', 'budget']);
      expect(types[types.length - 1]).toBe('done');
    });
  });

  describe('one run per ask', () => {
    const question = 'How do I create an HNSW index and which distance functions can an index use?';

    it('stops a run once another run claims the ask: nothing more published or stored by it', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const askId = randomUUID();
      await open(askId, ids);
      const data = { askId, ...ids, question, acceptedAt: new Date().toISOString(), items };
      const stale = slowService().synthesize(data, { attempt: 1 });
      await deltas(askId, 2);
      // What a second worker taking up the stalled job does first.
      const current = slowService().synthesize(data, { attempt: 2 });
      expect(await stale).toBe('fenced');
      expect(await current).toBe('finished');
      const all = await events.readAll(askId);
      const types = all.map((e) => e.type);
      const reset = types.indexOf('reset');
      // budget, the stale run's deltas, then the current run alone: reset, budget, deltas, done.
      expect(types.slice(0, 1)).toEqual(['budget']);
      expect(types.filter((t) => t === 'reset')).toHaveLength(1);
      expect(types.slice(reset, reset + 2)).toEqual(['reset', 'budget']);
      expect(types.filter((t) => t === 'done')).toHaveLength(1);
      expect(types[types.length - 1]).toBe('done');
      const afterReset = all
        .slice(reset + 1)
        .filter((e) => e.type === 'delta')
        .map((e) => (e.data as { text: string }).text)
        .join('');
      expect(await rows(askId)).toEqual([{ answer: afterReset }]);
    });

    it('stops at once when the worker reports the job lock lost, with no terminal event and no row', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const askId = randomUUID();
      await open(askId, ids);
      const lock = new AbortController();
      const run = slowService().synthesize(
        { askId, ...ids, question, acceptedAt: new Date().toISOString(), items },
        { attempt: 1, signal: lock.signal },
      );
      await deltas(askId, 2);
      lock.abort();
      expect(await run).toBe('fenced');
      const types = (await events.readAll(askId)).map((e) => e.type);
      await new Promise((r) => setTimeout(r, 200));
      expect((await events.readAll(askId)).map((e) => e.type)).toEqual(types);
      expect(types).not.toContain('done');
      expect(types).not.toContain('error');
      expect(await rows(askId)).toEqual([]);
    });
  });

  describe('session deleted under an ask', () => {
    it('ends the ask with one 404 before any upstream call when the session is already gone', async () => {
      const ids = await newProject({ provider: 'ollama', model: 'llama3.1:8b', baseUrl: upstream.url });
      await sessions.delete(ids.projectId, ids.sessionId);
      const calls = upstream.requests.length;
      const { askId, events: evs } = await ask(ids, 'What is an HNSW index?');
      expect(evs.map((e) => [e.type, (e.data as { status?: number; code?: string }).code])).toEqual([
        ['error', 'not_found'],
      ]);
      expect((evs[0].data as { status: number }).status).toBe(404);
      expect(upstream.requests.length).toBe(calls);
      expect(await rows(askId)).toEqual([]);
    });

    it('ends the ask with one 404, not a retry, when the session is deleted while the answer streams', async () => {
      const ids = await newProject({ provider: 'local', model: 'local' });
      const askId = randomUUID();
      await open(askId, ids);
      const run = slowService().synthesize(
        { askId, ...ids, question: 'How do I create an HNSW index?', acceptedAt: new Date().toISOString(), items },
        { attempt: 1 },
      );
      await deltas(askId, 1);
      await sessions.delete(ids.projectId, ids.sessionId);
      expect(await run).toBe('finished');
      const evs = await events.readAll(askId);
      expect(
        evs
          .filter((e) => e.type === 'error' || e.type === 'done')
          .map((e) => [e.type, (e.data as { status?: number }).status]),
      ).toEqual([['error', 404]]);
      expect(evs[evs.length - 1].type).toBe('error');
      expect(await rows(askId)).toEqual([]);
    });
  });
});
