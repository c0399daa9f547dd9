/**
 * What every fault suite sets up: a migrated throwaway database (on the machine's server, or on a
 * suite's own PostgreSQL), a project with the local providers over the pgvector knowledge base, a
 * project API key, and the three apps on a suite's own Redis. Plus the client side: following an
 * ask to its end with bounded reconnects, and counting stored rows per ask id.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { AskApiError, AskClient, type AskOutcome, applyEvent } from '@ask/ask-client';
import type { AskEvent } from '@ask/ask-contracts';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  ApiKeysRepository,
  createDataSource,
  CredentialsCipher,
  ensureDatabase,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  runMigrations,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import type { DataSource } from 'typeorm';
import type { PostgresServer } from './servers';

/** The small real knowledge base: pgvector's README and CHANGELOG. */
export const KB = resolve(__dirname, '..', '..', '..', '..', '..', 'shared', 'data', 'kb-pgvector');

/** Questions the suites cycle through. */
export const QUESTIONS = [
  'How do I create an HNSW index with pgvector?',
  'Which distance functions can an index use?',
  'How do I tune ef_search for better recall?',
  'What is the difference between IVFFlat and HNSW indexes?',
  'How do I store half-precision vectors?',
];

/** A throwaway database and an initialised DataSource on it. */
export interface SuiteDatabase {
  url: string;
  dataSource: DataSource;
  drop(): Promise<void>;
}

/** A database on a suite's own PostgreSQL (dropped with the server), or on the machine's (dropped here). */
export async function suiteDatabase(postgres?: PostgresServer): Promise<SuiteDatabase> {
  if (!postgres) return createTestDatabase();
  const url = postgres.urlFor(`ask_fault_${randomBytes(4).toString('hex')}`);
  await ensureDatabase(url);
  await runMigrations(url);
  const dataSource = createDataSource({ DATABASE_URL: url }, { poolSize: 4, applicationName: 'ask-fault-test' });
  await dataSource.initialize();
  return {
    url,
    dataSource,
    drop: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

/** A running suite: database, project, key, stack, client. */
export interface FaultFixture {
  db: SuiteDatabase;
  stack: Stack;
  client: AskClient;
  projectId: string;
  apiKey: string;
  encryptionKey: string;
  projects: ProjectsRepository;
  /** Stops the stack and drops the database. Idempotent, never throws. */
  close(): Promise<void>;
}

export interface FixtureOptions {
  redisUrl: string;
  postgres?: PostgresServer;
  /** Added to the stack's environment (after the suite defaults). */
  env?: NodeJS.ProcessEnv;
  /** The project's LLM settings; default the local stand-in. */
  llmSettings?: { provider: string; model: string; baseUrl?: string };
  credentials?: Record<string, string>;
}

/** Sets up a suite; on failure tears down what it started and rethrows. */
export async function startFixture(options: FixtureOptions): Promise<FaultFixture> {
  const encryptionKey = randomBytes(32).toString('hex');
  const db = await suiteDatabase(options.postgres);
  let stack: Stack | undefined;
  try {
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
    const project = await projects.create({
      name: 'faults',
      llmSettings: (options.llmSettings ?? { provider: 'local', model: 'local' }) as never,
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: 6,
    });
    if (options.credentials) await projects.setCredentials(project.id, options.credentials as never);
    const ingestion = new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource));
    await ingestion.ingest(project.id, await loadDocuments(KB), new LocalEmbeddingProvider());
    const apiKey = (await new ApiKeysRepository(db.dataSource).create(project.id, 'fault suite')).key;
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        REDIS_URL: options.redisUrl,
        ASK_KEY_PREFIX: `faults-${randomUUID()}`,
        ASK_ENCRYPTION_KEY: encryptionKey,
        ASK_RATE_LIMIT_PER_MINUTE: '100000',
        LOG_LEVEL: 'warn',
        ...options.env,
      },
    });
    const running = stack;
    let closed = false;
    return {
      db,
      stack: running,
      client: new AskClient(running.gatewayUrl, apiKey),
      projectId: project.id,
      apiKey,
      encryptionKey,
      projects,
      async close() {
        if (closed) return;
        closed = true;
        await running.stop(5_000).catch(() => undefined);
        await db.drop().catch(() => undefined);
      },
    };
  } catch (err) {
    await stack?.stop(2_000).catch(() => undefined);
    await db.drop().catch(() => undefined);
    throw err;
  }
}

/** How one followed ask ended. */
export interface Followed extends AskOutcome {
  /** `done`, `error`, or `hung` (no terminal event before the client's own limit). */
  end: 'done' | 'error' | 'hung';
  /** Milliseconds from acceptance to the terminal event (or to giving up). */
  elapsedMs: number;
  /** Stream connections opened (1 + reconnects). */
  connections: number;
  /** Non-2xx answers of the events route, as `status code`. */
  httpErrors: string[];
}

/**
 * Follows an accepted ask's events to `done` or `error`, reconnecting with Last-Event-ID after a
 * dropped stream or a refused connection, until `limitMs` after the start; then reports `hung`.
 * `after`: start after this event id (what the caller has already read).
 */
export async function follow(client: AskClient, askId: string, sessionId: string, limitMs: number, after?: string): Promise<Followed> {
  const started = Date.now();
  const outcome: Followed = { askId, sessionId, answer: '', events: [], end: 'hung', elapsedMs: 0, connections: 0, httpErrors: [] };
  let lastEventId: string | undefined = after;
  while (Date.now() - started < limitMs && outcome.connections < 500) {
    outcome.connections += 1;
    const signal = AbortSignal.timeout(Math.max(1, limitMs - (Date.now() - started)));
    try {
      for await (const event of client.events(askId, { lastEventId, signal })) {
        lastEventId = event.id;
        outcome.events.push(event);
        applyEvent(outcome, event);
      }
    } catch (err) {
      if (err instanceof AskApiError) outcome.httpErrors.push(`${err.status} ${err.body.code ?? ''}`.trim());
    }
    if (outcome.done || outcome.error) {
      outcome.end = outcome.done ? 'done' : 'error';
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  outcome.elapsedMs = Date.now() - started;
  return outcome;
}

/** Stored rows per ask id, for the given ask ids (0 for none). */
export async function rowsPerAsk(dataSource: DataSource, askIds: string[]): Promise<Map<string, { count: number; answer: string | null }>> {
  const rows: Array<{ ask_id: string; n: number; answer: string }> = await dataSource.query(
    'SELECT ask_id, count(*)::int AS n, min(answer) AS answer FROM ask_session_messages WHERE ask_id = ANY($1::text[]) GROUP BY ask_id',
    [askIds],
  );
  const out = new Map(askIds.map((id) => [id, { count: 0, answer: null as string | null }]));
  for (const row of rows) out.set(row.ask_id, { count: row.n, answer: row.answer });
  return out;
}

/** The text of an event list as a client reassembles it (deltas after the last `reset`). */
export function reassemble(events: AskEvent[]): string {
  const outcome: AskOutcome = { askId: '', sessionId: '', answer: '', events: [] };
  for (const event of events) applyEvent(outcome, event);
  return outcome.answer;
}

/** A typed error body or event: an HTTP-like status and a snake_case code. */
export function isTyped(error: { status?: number; code?: string } | undefined): boolean {
  return !!error && typeof error.status === 'number' && typeof error.code === 'string' && /^[a-z_]+$/.test(error.code);
}
