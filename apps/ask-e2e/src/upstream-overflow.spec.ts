import { randomBytes, randomUUID } from 'node:crypto';
import { AskClient, type AskOutcome } from '@ask/ask-client';
import type { BudgetEvent } from '@ask/ask-contracts';
import { startFakeUpstream, type FakeUpstream } from '@ask/fake-upstream';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import { TiktokenCounter } from '@ask/token-counting';
import { removeTestKeys } from '@ask/testing';

/**
 * A project whose configured window (400,000) is larger than what the OpenAI upstream enforces for
 * gpt-4o (128,000, the fake upstream counts with o200k_base): the first call overflows, the worker
 * re-budgets below the limit the provider disclosed and retries once, never resending as-is.
 */
describe('an upstream context overflow, end to end (fake OpenAI upstream)', () => {
  const encryptionKey = randomBytes(32).toString('hex');
  const counter = new TiktokenCounter('o200k_base');
  let db: TestDatabase;
  let upstream: FakeUpstream;
  let stack: Stack;
  let client: AskClient;
  let projectId: string;
  let sessionId: string;
  let outcome: AskOutcome;

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = await startFakeUpstream();
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
    const project = await projects.create({
      name: 'overflow',
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1`, contextWindow: 400_000 },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    projectId = project.id;
    await projects.setCredentials(projectId, { apiKey: `sk-test-${randomUUID()}` });
    // 40 stored turns of ~4,000 tokens each: ~160,000 tokens of history, more than gpt-4o takes.
    const sessions = new SessionsRepository(db.dataSource);
    sessionId = (await sessions.create(projectId, 'long')).id;
    const answer = 'history '.repeat(4_000).trim();
    for (let i = 0; i < 40; i += 1) {
      await sessions.appendMessage({
        projectId,
        sessionId,
        askId: randomUUID(),
        question: `Earlier question ${i}?`,
        answer,
      });
    }
    const { key } = await new ApiKeysRepository(db.dataSource).create(projectId);
    stack = await startStack({
      // The operator allow-lists the fake upstream on loopback (internal addresses are refused otherwise).
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `e2e-${randomUUID()}`,
        ASK_ENCRYPTION_KEY: encryptionKey,
        LOG_LEVEL: 'warn',
        ASK_PROVIDER_URL_ALLOWLIST: upstream.url,
      },
    });
    client = new AskClient(stack.gatewayUrl, key);
    outcome = await client.askAndWait(projectId, 'What did we discuss?', { sessionId });
  });

  afterAll(async () => {
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await upstream?.close();
    await db?.drop();
  });

  it('plans twice: first against the configured window, then below the limit the provider disclosed', () => {
    const budgets = outcome.events.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent);
    expect(budgets.map((b) => b.window)).toEqual([400_000, 128_000]);
    expect(budgets[0].turnsKept).toBe(40);
    expect(budgets[1].turnsKept).toBeLessThan(40);
    expect(budgets[1].used + budgets[1].maxTokens).toBeLessThanOrEqual(128_000);
    expect(outcome.error).toBeUndefined();
  });

  it('sent the oversize request once and the re-budgeted one once', () => {
    const chats = upstream.requests.filter((r) => r.path.endsWith('/chat/completions'));
    expect(chats).toHaveLength(2);
  });

  it('streams and stores the answer of the second call', async () => {
    const rows = await db.dataSource.query('SELECT answer, prompt_tokens FROM ask_session_messages WHERE ask_id = $1', [
      outcome.askId,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].answer).toBe(outcome.answer);
    expect(outcome.answer.length).toBeGreaterThan(0);
    // A custom base_url gets the approximate counter (seed 000); the upstream counts with o200k_base
    // and reports it: our estimate of what was sent never under-counts it.
    const second = outcome.events.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent)[1];
    expect([second.counter, second.counterId]).toEqual(['approximate', 'approx:script-v1']);
    expect(rows[0].prompt_tokens).toBeLessThanOrEqual(second.used);
    expect(rows[0].prompt_tokens).toBeGreaterThan(counter.countText('history '.repeat(4_000)));
  });
});
