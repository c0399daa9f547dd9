/**
 * Paid once (issue 31 item 1): Redis is emptied (FLUSHALL, as a restart without persistence would)
 * right after asks streamed `done`, before the reconciler recorded them in the `asks` table (it leaves
 * asks alone for RECONCILE_MIN_AGE_MS). The reconciler then finds them open with no Redis state; their
 * stored answers must end them again, never a second provider call: exactly one chat call and one
 * embedding call per ask at the fake upstream, one `provider_calls` row for each, one stored pair,
 * and one terminal event in the rebuilt stream.
 */
import { type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import { type FaultFixture, follow, QUESTIONS, reassemble, rowsPerAsk, startFixture } from './fixture';
import { redisCommand, type RedisServer, startRedis } from '@ask/stack';

const ASKS = 3;

describe('fault: Redis is emptied right after done, before the reconciler recorded the asks', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let fx: FaultFixture;

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startFakeUpstream({ chunkDelayMs: 2 })]);
    fx = await startFixture({
      name: 'paid-once',
      redisUrl: redis.url,
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      embeddingSettings: {
        provider: 'openai',
        model: 'text-embedding-3-small',
        dimensions: 256,
        baseUrl: `${upstream.url}/v1`,
      },
      credentials: { apiKey: 'sk-fake-paid-once' },
      // A pass every second, so the lost asks are handled within seconds of the flush.
      env: { ASK_RECONCILE_INTERVAL_MS: '1000', ASK_DEADLINE_MS: '60000' },
    });
  });

  afterAll(async () => {
    await fx?.close();
    await upstream?.close();
    await redis?.close();
  });

  const calls = (route: string) => upstream.requests.filter((r) => r.route === route).length;
  const askRows = (ids: string[]): Promise<Array<{ id: string; state: string; requeues: number }>> =>
    fx.db.dataSource.query('SELECT id, state, requeues FROM asks WHERE id = ANY($1::uuid[]) ORDER BY accepted_at', [
      ids,
    ]);

  it('each finished ask is paid once: one chat and one embedding call, each recorded, one stored pair, one terminal event', async () => {
    // All at once, so they end within RECONCILE_MIN_AGE_MS of their acceptance, before any pass.
    const asks = await Promise.all(
      QUESTIONS.slice(0, ASKS).map(async (question) => {
        const accepted = await fx.client.ask(fx.projectId, question);
        return { accepted, first: await follow(fx.client, accepted.askId, accepted.sessionId, 20_000) };
      }),
    );
    const ids = asks.map((a) => a.accepted.askId);
    expect(asks.map((a) => a.first.end)).toEqual(Array(ASKS).fill('done'));
    // The premise: asks no pass has recorded yet (younger than RECONCILE_MIN_AGE_MS). On a loaded
    // machine a slow one may already be recorded: it is then left alone, and counted all the same.
    const unrecorded = (await askRows(ids)).filter((r) => r.state === 'accepted').map((r) => r.id);
    expect(unrecorded.length).toBeGreaterThanOrEqual(1);
    const before = { chat: calls('openai.chat'), embeddings: calls('openai.embeddings') };
    expect(before).toEqual({ chat: ASKS, embeddings: ASKS });

    expect(await redisCommand(redis.port, 'FLUSHALL')).toBe('+OK');

    // The reconciler's passes: every ask recorded as ended (after a re-run, if it ran them again).
    let rows = await askRows(ids);
    for (let i = 0; i < 60 && rows.some((r) => r.state === 'accepted'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      rows = await askRows(ids);
    }
    // Two more passes' time, so a re-run still going would show its calls.
    await new Promise((r) => setTimeout(r, 2_500));
    const rebuilt = await Promise.all(
      asks
        .filter((a) => unrecorded.includes(a.accepted.askId))
        .map((a) => follow(fx.client, a.accepted.askId, a.accepted.sessionId, 20_000)),
    );
    const stored = await rowsPerAsk(fx.db.dataSource, ids);
    const usage: Array<{ operation: string; n: number }> = await fx.db.dataSource.query(
      `SELECT operation, count(*)::int AS n FROM provider_calls WHERE ask_id = ANY($1::uuid[]) GROUP BY 1 ORDER BY 1`,
      [ids],
    );
    const figures = {
      upstream: { chat: calls('openai.chat'), embeddings: calls('openai.embeddings') },
      usage,
      unrecordedAtFlush: unrecorded.length,
      rows: rows.map((r) => `${r.state}/${r.requeues}`),
      rebuilt: rebuilt.map((f) => f.events.map((e) => e.type).join(' ')),
    };
    console.log(`paid once after FLUSHALL: ${JSON.stringify(figures)}`);

    expect(figures.upstream).toEqual({ chat: ASKS, embeddings: ASKS });
    expect(usage).toEqual([
      { operation: 'chat', n: ASKS },
      { operation: 'embeddings', n: ASKS },
    ]);
    expect(rows.map((r) => [r.state, r.requeues])).toEqual(Array(ASKS).fill(['done', 0]));
    for (const a of asks)
      expect(stored.get(a.accepted.askId)).toEqual({ count: 1, answer: reassemble(a.first.events) });
    for (const f of rebuilt) {
      const row = stored.get(f.askId)!;
      // The rebuilt stream ends once, with the stored answer, replayed without any provider call.
      expect(f.events.map((e) => e.type)).toEqual(['reset', 'delta', 'done']);
      expect(f.events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
      expect(reassemble(f.events)).toBe(row.answer);
    }
  });
});
