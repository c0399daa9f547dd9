import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { AskApiError, AskClient, type AskOutcome } from '@ask/ask-client';
import type { AskEvent, RetrievedEvent } from '@ask/ask-contracts';
import { embeddingNotConfigured, llmNotConfigured } from '@ask/ask-errors';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  ApiKeysRepository,
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import { removeTestKeys } from '@ask/testing';

/** The small real knowledge base: pgvector's README and CHANGELOG, committed in fixtures/data (source, licence: its README). */
const KB = resolve(__dirname, '..', '..', '..', 'fixtures', 'data', 'kb-pgvector');
const TOP_K = 6;

/** Event types in order, with each run of deltas folded into one `delta`. */
function shape(events: AskEvent[]): string[] {
  return events.map((e) => e.type).filter((type, i, all) => !(type === 'delta' && all[i - 1] === 'delta'));
}

describe('the ask flow, end to end (three processes, real PostgreSQL and Redis)', () => {
  let db: TestDatabase;
  let stack: Stack;
  let client: AskClient;
  let projectId: string;
  let projects: ProjectsRepository;
  let keys: ApiKeysRepository;
  /** A client holding a fresh API key of `id` (the gateway authenticates every project route). */
  const clientFor = async (id: string) => new AskClient(stack.gatewayUrl, (await keys.create(id, 'e2e')).key);

  beforeAll(async () => {
    db = await createTestDatabase();
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    const project = await projects.create({
      name: 'e2e',
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: TOP_K,
    });
    projectId = project.id;
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    await ingestion.ingest(projectId, await loadDocuments(KB), new LocalEmbeddingProvider());
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `e2e-${randomUUID()}`,
        LOCAL_LLM_CHUNK_DELAY_MS: '20',
        LOG_LEVEL: 'warn',
      },
    });
    keys = new ApiKeysRepository(db.dataSource);
    client = await clientFor(projectId);
  });

  afterAll(async () => {
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await db?.drop();
  });

  const messagesOf = (sessionId: string) =>
    db.dataSource.query(
      'SELECT id, ask_id, question, answer, prompt_tokens, completion_tokens FROM ask_session_messages WHERE session_id = $1 ORDER BY created_at',
      [sessionId],
    );

  describe('a 3-turn session over HTTP + SSE', () => {
    const questions = [
      'How do I create an HNSW index with pgvector?',
      'Which distance functions can that index use?',
      'How do I tune the ef_search parameter for better recall?',
    ];
    const outcomes: AskOutcome[] = [];

    beforeAll(async () => {
      let sessionId: string | undefined;
      for (const question of questions) {
        const outcome = await client.askAndWait(projectId, question, { sessionId });
        sessionId = outcome.sessionId;
        outcomes.push(outcome);
      }
    });

    it('emits exactly accepted, retrieved, budget, deltas, done for each turn', () => {
      for (const outcome of outcomes) {
        expect(shape(outcome.events)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
        expect(outcome.events.filter((e) => e.type === 'delta').length).toBeGreaterThan(3);
        expect(outcome.events[0].data).toEqual({ askId: outcome.askId, sessionId: outcome.sessionId });
        const retrieved = outcome.events[1].data as RetrievedEvent;
        expect(retrieved.counts).toEqual({ insight: 0, recommendation: 0, knowledge: TOP_K });
      }
    });

    it('keeps every turn in one session and stores exactly the streamed answers', async () => {
      const sessionId = outcomes[0].sessionId;
      expect(outcomes.map((o) => o.sessionId)).toEqual([sessionId, sessionId, sessionId]);
      const rows = await messagesOf(sessionId);
      expect(rows.map((r: { question: string }) => r.question)).toEqual(questions);
      expect(rows.map((r: { ask_id: string }) => r.ask_id)).toEqual(outcomes.map((o) => o.askId));
      expect(rows.map((r: { answer: string }) => r.answer)).toEqual(outcomes.map((o) => o.answer));
      expect(rows.map((r: { id: string }) => r.id)).toEqual(outcomes.map((o) => o.done?.messageId));
      for (const [i, row] of rows.entries()) {
        expect(row.prompt_tokens).toBe(outcomes[i].done?.usage.promptTokens);
        expect(row.completion_tokens).toBeGreaterThan(0);
      }
    });

    it("sends turns 1 and 2 in turn 3's prompt", async () => {
      const rows = await messagesOf(outcomes[0].sessionId);
      const budget = outcomes[2].budget!;
      expect(budget.keptTurnIds).toEqual([rows[0].id, rows[1].id]);
      expect([budget.turnsKept, budget.turnsDropped]).toEqual([2, 0]);
      expect(outcomes[2].answer.split('\n')[0]).toBe('(Follow-up; this prompt carried 2 earlier turns.)');
      expect(outcomes[0].budget?.keptTurnIds).toEqual([]);
    });

    it('reports the budget of the local stand-in: window 8192, exact o200k counter, 5% margin', () => {
      const budget = outcomes[0].budget!;
      expect(budget).toMatchObject({
        provider: 'local',
        model: 'local',
        window: 8192,
        maxTokens: 2048,
        reserve: 600,
        margin: 410,
        counter: 'exact',
        counterId: 'tiktoken:o200k_base',
        available: 5134,
        contextKept: TOP_K,
        contextDropped: 0,
      });
      // The stand-in reports usage with the same counter over the same messages; the plan counts
      // knowledge chunks from their cached ingestion counts, at most one token over per item.
      const over = budget.used - (outcomes[0].done?.usage.promptTokens ?? 0);
      expect(over).toBeGreaterThanOrEqual(0);
      expect(over).toBeLessThanOrEqual(budget.contextKept);
    });
  });

  describe('reconnecting with Last-Event-ID', () => {
    it('yields the rest of the answer with no gap and no repeat (through the eventsUrl token, no key)', async () => {
      const accepted = await client.ask(projectId, 'What is the difference between IVFFlat and HNSW indexes?');
      expect(accepted.eventsUrl).toMatch(
        new RegExp(`^/api/v1/asks/${accepted.askId}/events\\?token=[A-Za-z0-9_-]{43}$`),
      );
      // As a browser's EventSource does: no Authorization header, only the capability token of eventsUrl.
      const browser = new AskClient(stack.gatewayUrl);
      const first: AskEvent[] = [];
      const controller = new AbortController();
      try {
        for await (const event of browser.events(accepted.askId, {
          signal: controller.signal,
          eventsUrl: accepted.eventsUrl,
        })) {
          first.push(event);
          if (first.filter((e) => e.type === 'delta').length === 3) controller.abort();
        }
      } catch (err) {
        if ((err as Error).name !== 'AbortError') throw err;
      }
      const rest: AskEvent[] = [];
      for await (const event of browser.events(accepted.askId, {
        lastEventId: first[first.length - 1].id,
        eventsUrl: accepted.eventsUrl,
      })) {
        rest.push(event);
      }
      const all = [...first, ...rest];
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
      expect(shape(all)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
      const text = all
        .filter((e) => e.type === 'delta')
        .map((e) => (e.data as { text: string }).text)
        .join('');
      const [row] = await db.dataSource.query('SELECT answer FROM ask_session_messages WHERE ask_id = $1', [
        accepted.askId,
      ]);
      expect(text).toBe(row.answer);
      expect(first.filter((e) => e.type === 'delta').length).toBe(3);
      expect(rest.filter((e) => e.type === 'delta').length).toBeGreaterThan(0);
    });
  });

  describe('typed errors', () => {
    it('answers 412 llm_not_configured with the seed body for a project without an LLM provider', async () => {
      const bare = await projects.create({
        name: 'no llm',
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      });
      const error = await (await clientFor(bare.id)).ask(bare.id, 'Anything?').catch((e: AskApiError) => e);
      expect(error).toBeInstanceOf(AskApiError);
      expect((error as AskApiError).status).toBe(412);
      expect((error as AskApiError).body).toEqual(llmNotConfigured().toBody());
    });

    it('answers 412 embedding_not_configured for a project without an embedding provider', async () => {
      const bare = await projects.create({ name: 'no embedding', llmSettings: { provider: 'local', model: 'local' } });
      const error = (await (await clientFor(bare.id)).ask(bare.id, 'Anything?').catch((e) => e)) as AskApiError;
      expect([error.status, error.body]).toEqual([412, embeddingNotConfigured().toBody()]);
    });

    it('answers 412 embedding_not_configured naming the field for an embedding provider without its credential, storing no ask', async () => {
      const keyless = await projects.create({
        name: 'embedding without key',
        llmSettings: { provider: 'local', model: 'local' },
        embeddingSettings: { provider: 'openai', model: 'text-embedding-3-small', dimensions: 256 },
      });
      const error = (await (await clientFor(keyless.id)).ask(keyless.id, 'Anything?').catch((e) => e)) as AskApiError;
      expect([error.status, error.body]).toEqual([
        412,
        embeddingNotConfigured('embedding provider=openai: apiKey is not set').toBody(),
      ]);
      const [{ asks }] = await db.dataSource.query('SELECT count(*)::int AS asks FROM asks WHERE project_id = $1', [
        keyless.id,
      ]);
      expect(asks).toBe(0);
    });

    it('answers 400 naming the field for a question over 4,000 tokens (o200k_base), before queueing', async () => {
      const question = '向量索引如何工作？'.repeat(880); // 7,920 characters, 6,160 tokens
      const error = (await client.ask(projectId, question).catch((e) => e)) as AskApiError;
      expect([error.status, error.body.code, error.body.details]).toEqual([
        400,
        'invalid_request',
        'question: question must be at most 4000 tokens (o200k_base), got 6160',
      ]);
    });

    it('ends a question too large for the window with a 413 context_overflow event and stores nothing', async () => {
      // A window capped at 1,024 tokens leaves 357 for the prompt; the question alone is about 700.
      const small = await projects.create({
        name: 'small window',
        llmSettings: { provider: 'local', model: 'local', maxContextTokens: 1024, maxTokens: 16 },
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      });
      const question = '向量索引如何工作？'.repeat(100);
      const outcome = await (await clientFor(small.id)).askAndWait(small.id, question);
      expect(outcome.error).toMatchObject({
        status: 413,
        code: 'context_overflow',
        error: "this conversation has grown past the model's context window",
      });
      expect(outcome.error?.details).toMatch(/^model=local window=1024 question=\d+ rag=0 knowledge=\d+$/);
      expect(shape(outcome.events)).toEqual(['accepted', 'retrieved', 'error']);
      expect(await messagesOf(outcome.sessionId)).toEqual([]);
    });

    it('answers 404 for an unknown project and 400 naming the field for a bad body', async () => {
      const missing = (await client.ask(randomUUID(), 'Hello?').catch((e) => e)) as AskApiError;
      expect([missing.status, missing.body.code]).toEqual([404, 'not_found']);
      const bad = (await client
        .request('POST', `/api/v1/projects/${projectId}/ask`, { question: 42 })
        .catch((e) => e)) as AskApiError;
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('invalid_request');
      expect(bad.body.details).toMatch(/^question: /);
    });

    it('answers 404 on the events route for an unknown ask', async () => {
      const error = await (async () => {
        for await (const _ of client.events(randomUUID())) return null;
        return null;
      })().catch((e) => e);
      expect((error as AskApiError).status).toBe(404);
    });
  });
});
