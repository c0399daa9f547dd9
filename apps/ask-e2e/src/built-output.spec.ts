import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AskClient, type AskOutcome } from '@ask/ask-client';
import type { AskEvent } from '@ask/ask-contracts';
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
import { APPS, startStack, type Stack } from '@ask/stack';
import { removeTestKeys } from '@ask/testing';

/** pgvector's README and CHANGELOG, committed in fixtures/data (source, licence: its README). */
const KB = resolve(__dirname, '..', '..', '..', 'fixtures', 'data', 'kb-pgvector');

/** Event types in order, with each run of deltas folded into one `delta`. */
function shape(events: AskEvent[]): string[] {
  return events.map((e) => e.type).filter((type, i, all) => !(type === 'delta' && all[i - 1] === 'delta'));
}

/**
 * The production build: the four apps started with plain `node dist/<app>/main.js` (what `nx build`
 * writes and the Dockerfile ships; the test target depends on the four builds), not through the
 * TypeScript loader, answer one ask with the embedded local providers.
 */
describe('the built apps (node dist/<app>/main.js), end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let projectId: string;
  let outcome: AskOutcome;

  beforeAll(async () => {
    db = await createTestDatabase();
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectId = (
      await projects.create({
        name: 'built',
        llmSettings: { provider: 'local', model: 'local' },
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
        topK: 6,
      })
    ).id;
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    await ingestion.ingest(projectId, await loadDocuments(KB), new LocalEmbeddingProvider());
    stack = await startStack({
      code: 'build',
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `e2e-built-${randomUUID()}`,
        LOCAL_LLM_CHUNK_DELAY_MS: '0',
        LOG_LEVEL: 'warn',
      },
    });
    const key = (await new ApiKeysRepository(db.dataSource).create(projectId, 'e2e-built')).key;
    outcome = await new AskClient(stack.gatewayUrl, key).askAndWait(
      projectId,
      'How do I create an HNSW index with pgvector?',
    );
  });

  afterAll(async () => {
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await db?.drop();
  });

  it('runs each app as node dist/<app>/main.js, with no TypeScript loader', () => {
    for (const name of APPS) {
      const argv = readFileSync(`/proc/${stack.apps[name].child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      expect(argv.slice(1)).toEqual([resolve(__dirname, '..', '..', '..', 'dist', name, 'main.js')]);
    }
  });

  it('answers one ask: accepted, retrieved, budget, deltas, done, and stores exactly the streamed answer', async () => {
    expect(shape(outcome.events)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
    expect(outcome.answer.length).toBeGreaterThan(0);
    const rows = await db.dataSource.query('SELECT ask_id, answer FROM ask_session_messages WHERE session_id = $1', [
      outcome.sessionId,
    ]);
    expect(rows).toEqual([{ ask_id: outcome.askId, answer: outcome.answer }]);
  });

  it('serves the dashboard bundle copied into the gateway build', async () => {
    const response = await fetch(`${stack.gatewayUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
