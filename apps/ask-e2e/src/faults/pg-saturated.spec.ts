/**
 * Every provider call recorded under a saturated PostgreSQL (issue 31 item 2): the suite's own
 * server with `max_connections` 20, under the four apps' pools of 10 each (default DATABASE_POOL_MAX)
 * and a burst of asks, while the suite itself holds all but 2 of the server's free connections for
 * the first HOLD_MS, so new connections are refused (53300 "sorry, too many clients already").
 * Asserted: every refused POST is a typed 503 `service_unavailable` with a `Retry-After` header (never
 * a 500), every accepted ask ends with `done` or a typed error event, and the `provider_calls` rows
 * equal the calls the fake upstream received, chat and embeddings apart (none lost to the pool).
 */
import { Client } from 'pg';
import { type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import { withTransientRetry } from '@ask/persistence';
import { type FaultFixture, follow, type Followed, isTyped, QUESTIONS, startFixture } from './fixture';
import { type PostgresServer, type RedisServer, startPostgres, startRedis } from '@ask/stack';

const ASKS = 40;
const MAX_CONNECTIONS = 20;
/** How long the suite holds the server's spare connections once the burst starts, in milliseconds. */
const HOLD_MS = 4_000;

/** One POST of the burst as the client saw it. */
interface Post {
  status: number;
  code?: string;
  retryAfter: string | null;
}

describe(`fault: PostgreSQL saturated (max_connections ${MAX_CONNECTIONS}, four apps with pools of 10) under a burst of ${ASKS} asks`, () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let fx: FaultFixture;
  const posts: Post[] = [];
  const followed: Followed[] = [];
  /** Connections the suite held during the first HOLD_MS of the burst. */
  let held = 0;

  beforeAll(async () => {
    [postgres, redis, upstream] = await Promise.all([
      startPostgres({ maxConnections: MAX_CONNECTIONS }),
      startRedis(),
      startFakeUpstream({ chunkDelayMs: 20 }),
    ]);
    fx = await startFixture({
      name: 'pg-saturated',
      redisUrl: redis.url,
      postgres,
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      embeddingSettings: {
        provider: 'openai',
        model: 'text-embedding-3-small',
        dimensions: 256,
        baseUrl: `${upstream.url}/v1`,
      },
      credentials: { apiKey: 'sk-fake-saturated' },
      env: { ASK_DEADLINE_MS: '90000' },
    });
    // Fill the server up to 2 free connections, and give them back HOLD_MS into the burst.
    const url = new URL(fx.db.url);
    const [{ n }] = await fx.db.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    const hogs: Client[] = [];
    for (let i = 0; i < MAX_CONNECTIONS - n - 3; i++) {
      const hog = new Client({ host: url.hostname, port: Number(url.port), user: 'postgres', database: 'postgres' });
      await hog.connect();
      hogs.push(hog);
    }
    held = hogs.length;
    const released = new Promise((r) => setTimeout(r, HOLD_MS)).then(() => Promise.all(hogs.map((h) => h.end())));
    // The burst: each client retries a 503 after its Retry-After, for up to 30 s.
    await Promise.all(
      Array.from({ length: ASKS }, async (_, i) => {
        for (const started = Date.now(); Date.now() - started < 30_000;) {
          const response = await fetch(`${fx.stack.gatewayUrl}/api/v1/projects/${fx.projectId}/ask`, {
            method: 'POST',
            headers: { authorization: `Bearer ${fx.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ question: QUESTIONS[i % QUESTIONS.length] }),
          });
          const body = (await response.json()) as { askId?: string; sessionId?: string; code?: string };
          posts.push({ status: response.status, code: body.code, retryAfter: response.headers.get('retry-after') });
          if (response.status === 202) {
            followed.push(await follow(fx.client, body.askId!, body.sessionId!, 120_000));
            return;
          }
          if (response.status !== 503) return;
          await new Promise((r) => setTimeout(r, 1_000 * Number(response.headers.get('retry-after') ?? 1)));
        }
      }),
    );
    await released;
  });

  afterAll(async () => {
    await fx?.close();
    await upstream?.close();
    await redis?.close();
    await postgres?.close();
  });

  /** A query of the suite itself, retried while the saturated server refuses it a connection. */
  const query = <R>(sql: string, params: unknown[] = []): Promise<R[]> =>
    withTransientRetry(() => fx.db.dataSource.query(sql, params), { attempts: 20, firstDelayMs: 250 });

  it('refuses a POST only with a typed 503 service_unavailable and Retry-After, never a 500', () => {
    const tally: Record<string, number> = {};
    for (const p of posts) {
      const key = `${p.status} ${p.code ?? ''} ${p.retryAfter ?? ''}`.trim();
      tally[key] = (tally[key] ?? 0) + 1;
    }
    console.log(
      `POSTs under a saturated PostgreSQL (${held} connections held by the suite): ${JSON.stringify(tally)}; accepted ${followed.length}`,
    );
    for (const p of posts) {
      if (p.status === 202) continue;
      expect(p).toEqual({ status: 503, code: 'service_unavailable', retryAfter: '1' });
    }
    expect(followed.length).toBe(ASKS);
  });

  it('ends every accepted ask with done or a typed error event', () => {
    const ends: Record<string, number> = {};
    for (const f of followed) {
      const key = f.end === 'error' ? `error ${f.error?.status} ${f.error?.code}` : f.end;
      ends[key] = (ends[key] ?? 0) + 1;
    }
    console.log(`asks under a saturated PostgreSQL: ${JSON.stringify(ends)}`);
    for (const f of followed) {
      expect(f.end).not.toBe('hung');
      if (f.end === 'error') expect(isTyped(f.error)).toBe(true);
    }
  });

  it('records every call the upstream received: provider_calls rows = chat calls and embedding calls', async () => {
    // Writes still retrying finish within a few seconds of the last ask.
    await new Promise((r) => setTimeout(r, 5_000));
    const rows = await query<{ operation: string; n: number; in_flight: number }>(
      `SELECT operation, count(*)::int AS n, count(*) FILTER (WHERE finish_reason = 'in_flight')::int AS in_flight
         FROM provider_calls WHERE project_id = $1 GROUP BY 1 ORDER BY 1`,
      [fx.projectId],
    );
    const calls = {
      chat: upstream.requests.filter((r) => r.route === 'openai.chat').length,
      embeddings: upstream.requests.filter((r) => r.route === 'openai.embeddings').length,
    };
    console.log(`calls at the upstream ${JSON.stringify(calls)}; provider_calls rows ${JSON.stringify(rows)}`);
    expect(calls.chat).toBeGreaterThanOrEqual(followed.filter((f) => f.end === 'done').length);
    expect(rows.map((r) => [r.operation, r.n])).toEqual([
      ['chat', calls.chat],
      ['embeddings', calls.embeddings],
    ]);
  });
});
