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
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { type PostgresServer, startStack, type Stack } from '@ask/stack';
import type { DataSource } from 'typeorm';
import { removeTestKeys } from '@ask/testing';

/** The small real knowledge base: pgvector's README and CHANGELOG, committed in fixtures/data (source, licence: its README). */
export const KB = resolve(__dirname, '..', '..', '..', '..', 'fixtures', 'data', 'kb-pgvector');

/** Questions the suites cycle through. */
export const QUESTIONS = [
  'How do I create an HNSW index with pgvector?',
  'Which distance functions can an index use?',
  'How do I tune ef_search for better recall?',
  'What is the difference between IVFFlat and HNSW indexes?',
  'How do I store half-precision vectors?',
];

/** A throwaway database and an initialised DataSource on it. */
export type SuiteDatabase = TestDatabase;

/** A database on a suite's own PostgreSQL, or on the machine's; dropped by `drop()`. */
export function suiteDatabase(postgres?: PostgresServer): Promise<SuiteDatabase> {
  return postgres ? createTestDatabase(postgres.urlFor('postgres')) : createTestDatabase();
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
  /** Names the suite's log directory: tmp/fault-logs/<name>-<pid>/<app>-<n>.log. */
  name: string;
  redisUrl: string;
  postgres?: PostgresServer;
  /** Added to the stack's environment (after the suite defaults). */
  env?: NodeJS.ProcessEnv;
  /** The project's LLM settings; default the local stand-in. */
  llmSettings?: { provider: string; model: string; baseUrl?: string };
  /**
   * The project's embedding settings; default the local lexical embedder over the knowledge base.
   * Another embedder (e.g. OpenAI at the fake upstream, to count embedding calls) gets no knowledge
   * base: its asks retrieve nothing but still embed their question.
   */
  embeddingSettings?: { provider: string; model: string; dimensions: number; baseUrl?: string };
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
      embeddingSettings: (options.embeddingSettings ?? {
        provider: 'local',
        model: 'local-lexical-v1',
        dimensions: 256,
      }) as never,
      // Conversation memory summarises each answered pair through the project's provider (in a job of
      // its own) unless the summariser is the built-in extractive one (in the ask's job, after done):
      // these suites count the answer path's upstream calls, so the summaries run without any (the
      // memory suites test the other).
      memorySettings: { summaryModel: 'extractive' },
      topK: 6,
    });
    if (options.credentials) await projects.setCredentials(project.id, options.credentials as never);
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    if (!options.embeddingSettings)
      await ingestion.ingest(project.id, await loadDocuments(KB), new LocalEmbeddingProvider());
    const apiKey = (await new ApiKeysRepository(db.dataSource).create(project.id, 'fault suite')).key;
    stack = await startStack({
      logDir: resolve(__dirname, '..', '..', '..', '..', 'tmp', 'fault-logs', `${options.name}-${process.pid}`),
      env: {
        DATABASE_URL: db.url,
        REDIS_URL: options.redisUrl,
        ASK_KEY_PREFIX: `faults-${randomUUID()}`,
        ASK_ENCRYPTION_KEY: encryptionKey,
        ASK_RATE_LIMIT_PER_MINUTE: '100000',
        LOG_LEVEL: 'warn',
        // The suite is the operator: it allow-lists the loopback upstream its project's LLM points at.
        ...(options.llmSettings?.baseUrl
          ? { ASK_PROVIDER_URL_ALLOWLIST: new URL(options.llmSettings.baseUrl).origin }
          : {}),
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
        // The suite's own redis-server may be down by now (a fault suite stops it): nothing to remove then.
        await removeTestKeys(running.env).catch(() => undefined);
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
export async function follow(
  client: AskClient,
  askId: string,
  sessionId: string,
  limitMs: number,
  after?: string,
): Promise<Followed> {
  const started = Date.now();
  const outcome: Followed = {
    askId,
    sessionId,
    answer: '',
    events: [],
    end: 'hung',
    elapsedMs: 0,
    connections: 0,
    httpErrors: [],
  };
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
export async function rowsPerAsk(
  dataSource: DataSource,
  askIds: string[],
): Promise<Map<string, { count: number; answer: string | null }>> {
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

/** One ask of a run under a fault: how its POST went, and how its stream ended. */
export interface RunAsk {
  index: number;
  /** The POST's error when the ask was not accepted (`status code`, or the network error's name). */
  rejected?: { status?: number; code?: string; message: string };
  /** Every rejected POST of this ask (retried while 503), as `status code` or the network error. */
  rejections: string[];
  followed?: Followed;
}

/**
 * Sends `count` asks, one every `spacingMs`, and follows each to its end (at most `limitMs`), while
 * `fault` runs once at `faultAtMs` after the first. Resolves when every ask has ended or given up.
 */
export async function runUnderFault(
  fx: FaultFixture,
  options: { count: number; spacingMs: number; limitMs: number; faultAtMs: number; fault: () => Promise<unknown> },
): Promise<{ asks: RunAsk[]; faultResult: unknown }> {
  const faultDone = new Promise((r) => setTimeout(r, options.faultAtMs)).then(options.fault);
  const asks = await Promise.all(
    Array.from({ length: options.count }, async (_, index): Promise<RunAsk> => {
      await new Promise((r) => setTimeout(r, index * options.spacingMs));
      // A client retries a 503 (the service says: retry shortly) for up to 15 s; anything else ends it.
      const rejections: string[] = [];
      for (const started = Date.now(); ;) {
        try {
          const accepted = await fx.client.ask(fx.projectId, QUESTIONS[index % QUESTIONS.length]);
          return {
            index,
            rejections,
            followed: await follow(fx.client, accepted.askId, accepted.sessionId, options.limitMs),
          };
        } catch (err) {
          const cause = (err as { cause?: { code?: string } }).cause?.code;
          const rejected =
            err instanceof AskApiError
              ? { status: err.status, code: err.body.code, message: err.message }
              : { message: `${(err as Error).name}: ${(err as Error).message}${cause ? ` (${cause})` : ''}` };
          rejections.push(rejected.code ? `${rejected.status} ${rejected.code}` : rejected.message);
          if (rejected.status !== 503 || Date.now() - started > 15_000) return { index, rejections, rejected };
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }),
  );
  return { asks, faultResult: await faultDone };
}

/** Figures of a run: how many asks were rejected, done, errored (by code), hung, and the slowest. */
export function summarise(asks: RunAsk[]) {
  const followed = asks.flatMap((a) => (a.followed ? [a.followed] : []));
  const errors: Record<string, number> = {};
  for (const f of followed)
    if (f.error) errors[`${f.error.status} ${f.error.code}`] = (errors[`${f.error.status} ${f.error.code}`] ?? 0) + 1;
  const rejected: Record<string, number> = {};
  for (const a of asks) for (const r of a.rejections) rejected[r] = (rejected[r] ?? 0) + 1;
  return {
    sent: asks.length,
    accepted: followed.length,
    postsRejected: rejected,
    retriedAsks: asks.filter((a) => a.rejections.length > 0).length,
    done: followed.filter((f) => f.end === 'done').length,
    errors,
    hung: followed.filter((f) => f.end === 'hung').length,
    slowestMs: Math.max(0, ...followed.map((f) => f.elapsedMs)),
    reconnects: followed.reduce((n, f) => n + f.connections - 1, 0),
  };
}
