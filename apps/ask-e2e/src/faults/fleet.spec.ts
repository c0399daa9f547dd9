/**
 * A fleet on one Redis (the suite's own) and one database: two gateways, two retrieval workers, two
 * synthesis workers and an ingestion worker, as separate processes. What a fleet must share: an ask
 * POSTed on one gateway streams from the other, a stream read half on one gateway resumes on the other
 * with `Last-Event-ID`, the per-project rate limit and the stream caps are the fleet's, and a
 * synthesis worker SIGKILLed mid-stream leaves every ask with one terminal event and one stored row.
 */
import type { AskEvent } from '@ask/ask-contracts';
import { AskApiError, AskClient } from '@ask/ask-client';
import { ApiKeysRepository } from '@ask/persistence';
import { type FaultFixture, follow, QUESTIONS, reassemble, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

const RATE_LIMIT = 10;
const PER_ASK = 2;

const types = (events: AskEvent[]) =>
  events.map((e) => e.type).filter((t, i, all) => t !== 'delta' || all[i - 1] !== 'delta');

describe('a fleet: two gateways, two of each worker, one Redis', () => {
  let redis: RedisServer;
  let fx: FaultFixture;
  let other: AskClient;
  let otherUrl: string;

  beforeAll(async () => {
    redis = await startRedis();
    fx = await startFixture({
      name: 'fleet',
      redisUrl: redis.url,
      env: {
        LOCAL_LLM_CHUNK_DELAY_MS: '80',
        ASK_DEADLINE_MS: '60000',
        ASK_STREAMS_PER_ASK: String(PER_ASK),
        // Per project, per minute, for the whole fleet: the main project's 7 asks stay under it.
        ASK_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        // Recovery from the kill in seconds: the worker's lock and stalled check shortened.
        SYNTHESIS_LOCK_DURATION_MS: '3000',
        SYNTHESIS_STALLED_INTERVAL_MS: '1000',
      },
    });
    const gateway = await fx.stack.start('api-gateway');
    otherUrl = new URL(gateway.healthUrl).origin;
    other = new AskClient(otherUrl, fx.apiKey);
    await fx.stack.start('retrieval-worker');
    await fx.stack.start('synthesis-worker');
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('streams an ask POSTed on one gateway from the other: accepted … done, once, and the stored answer', async () => {
    expect(otherUrl).not.toBe(fx.stack.gatewayUrl);
    const accepted = await fx.client.ask(fx.projectId, QUESTIONS[0]);
    const outcome = await follow(other, accepted.askId, accepted.sessionId, 30_000);
    expect(outcome.end).toBe('done');
    expect(types(outcome.events)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
    const rows = await rowsPerAsk(fx.db.dataSource, [accepted.askId]);
    expect(rows.get(accepted.askId)).toEqual({ count: 1, answer: outcome.answer });
  });

  it('resumes on the other gateway with Last-Event-ID: every event exactly once, in order', async () => {
    const accepted = await other.ask(fx.projectId, QUESTIONS[1]);
    const first: AskEvent[] = [];
    for await (const event of fx.client.events(accepted.askId)) {
      first.push(event);
      if (first.filter((e) => e.type === 'delta').length >= 3) break;
    }
    const rest = await follow(other, accepted.askId, accepted.sessionId, 30_000, first[first.length - 1].id);
    expect(rest.end).toBe('done');
    const ids = [...first, ...rest.events].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // The whole stream read again from the start on the first gateway: the same ids, the same text.
    const whole = await follow(fx.client, accepted.askId, accepted.sessionId, 30_000);
    expect(whole.events.map((e) => e.id)).toEqual(ids);
    expect(reassemble([...first, ...rest.events])).toBe(whole.answer);
  });

  it(`counts one ask's streams across both gateways: one more is a 429`, async () => {
    const accepted = await fx.client.ask(fx.projectId, QUESTIONS[2]);
    const controller = new AbortController();
    const open = (client: AskClient) =>
      (async () => {
        for await (const event of client.events(accepted.askId, { signal: controller.signal })) void event;
      })().catch(() => undefined);
    const readers = [open(fx.client), open(other)];
    try {
      let refused: AskApiError | undefined;
      // The two readers' slots are taken once their streams open: bounded retries until the third is refused.
      for (let i = 0; i < 50 && !refused; i += 1) {
        await new Promise((r) => setTimeout(r, 100));
        try {
          for await (const event of fx.client.events(accepted.askId, { signal: AbortSignal.timeout(300) })) void event;
        } catch (err) {
          if (err instanceof AskApiError) refused = err;
        }
      }
      expect(refused?.status).toBe(429);
      expect(refused?.body).toEqual({
        error: 'too many requests',
        code: 'rate_limited',
        details: `limit=streams_per_ask max=${PER_ASK} retry_after=5`,
      });
    } finally {
      controller.abort();
      await Promise.all(readers);
    }
  });

  it(`shares the per-project rate limit: ${RATE_LIMIT + 6} POSTs alternating between gateways, exactly ${RATE_LIMIT} accepted`, async () => {
    // A project of its own, so the other cases' asks do not count; the fleet's limit is set for it.
    const { id } = await fx.projects.create({
      name: 'fleet rate limit',
      llmSettings: { provider: 'local', model: 'local' } as never,
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as never,
    });
    const key = (await new ApiKeysRepository(fx.db.dataSource).create(id, 'fleet')).key;
    const clients = [new AskClient(fx.stack.gatewayUrl, key), new AskClient(otherUrl, key)];
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 6; i += 1) {
      statuses.push(
        await clients[i % 2].ask(id, `rate ${i}`).then(
          () => 202,
          (err: unknown) => (err instanceof AskApiError ? err.status : 0),
        ),
      );
    }
    expect(statuses.filter((s) => s === 202).length).toBe(RATE_LIMIT);
    expect(statuses.slice(RATE_LIMIT)).toEqual(Array(6).fill(429));
  });

  it('a synthesis worker SIGKILLed mid-stream: every ask ends with one terminal event, last, and one stored row', async () => {
    const asks = await Promise.all(QUESTIONS.slice(0, 4).map((q, i) => [fx.client, other][i % 2].ask(fx.projectId, q)));
    // Wait until every ask streams text (both workers busy), then kill the first synthesis worker.
    await Promise.all(
      asks.map(async (a) => {
        for await (const event of fx.client.events(a.askId, { signal: AbortSignal.timeout(30_000) }))
          if (event.type === 'delta') break;
      }),
    );
    const victim = fx.stack.apps['synthesis-worker'].child;
    victim.kill('SIGKILL');
    const outcomes = await Promise.all(
      asks.map((a, i) => follow([other, fx.client][i % 2], a.askId, a.sessionId, 45_000)),
    );
    for (const outcome of outcomes) {
      const terminal = outcome.events.filter((e) => e.type === 'done' || e.type === 'error');
      expect([outcome.end, terminal.length, outcome.events[outcome.events.length - 1].type]).toEqual([
        'done',
        1,
        'done',
      ]);
    }
    // The kill hit answers mid-stream: the asks it held restarted on the other worker (a `reset`).
    expect(outcomes.filter((o) => o.events.some((e) => e.type === 'reset')).length).toBeGreaterThan(0);
    const rows = await rowsPerAsk(
      fx.db.dataSource,
      asks.map((a) => a.askId),
    );
    expect(asks.map((a) => rows.get(a.askId))).toEqual(outcomes.map((o) => ({ count: 1, answer: o.answer })));
  });
});
