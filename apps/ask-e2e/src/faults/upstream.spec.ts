import { FAKE_ANSWER, type FakeFault, type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AskEvent } from '@ask/ask-contracts';
import { type FaultFixture, follow, type Followed, reassemble, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

/** Short, so a stalled upstream ends the ask in seconds (504 at the deadline). */
const DEADLINE_MS = 6_000;
/** A provider key planted in the project's credentials and in the upstream's error messages. */
const PLANTED_KEY = `sk-live-planted-${randomUUID()}`;

describe('fault: the LLM upstream fails (fake OpenAI upstream)', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let fx: FaultFixture;
  /** Every event every ask of this suite received. */
  const seenEvents: AskEvent[] = [];

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startFakeUpstream({ chunkDelayMs: 5 })]);
    fx = await startFixture({
      name: 'upstream',
      redisUrl: redis.url,
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      credentials: { apiKey: PLANTED_KEY },
      // The operator allow-lists the fake upstream on loopback (internal addresses are refused otherwise).
      env: { ASK_DEADLINE_MS: String(DEADLINE_MS), ASK_PROVIDER_URL_ALLOWLIST: upstream.url },
    });
  });

  afterAll(async () => {
    await fx?.close();
    await upstream?.close();
    await redis?.close();
  });

  /** Asks once with `fault` set for the next `count` chat calls; returns the outcome, the chat calls made and the stored rows. */
  async function askWith(
    fault: FakeFault,
    count: number,
    route = 'openai.chat',
  ): Promise<{ outcome: Followed; calls: number; rows: number; answer: string | null }> {
    upstream.clearFaults();
    upstream.setFault(fault, count);
    const before = upstream.requests.filter((r) => r.route === route).length;
    const accepted = await fx.client.ask(fx.projectId, 'How do I create an HNSW index with pgvector?');
    const outcome = await follow(fx.client, accepted.askId, accepted.sessionId, DEADLINE_MS + 10_000);
    seenEvents.push(...outcome.events);
    upstream.clearFaults();
    const calls = upstream.requests.filter((r) => r.route === route).length - before;
    const stored = (await rowsPerAsk(fx.db.dataSource, [accepted.askId])).get(accepted.askId)!;
    console.log(
      `${fault.kind} x${count}: ${outcome.end} ${outcome.error ? `${outcome.error.status} ${outcome.error.code}` : ''} after ${calls} calls, ${outcome.elapsedMs} ms, rows ${stored.count}`,
    );
    return { outcome, calls, rows: stored.count, answer: stored.answer };
  }

  it('429 with retry-after every time: 3 attempts honouring retry-after, then 502 llm_upstream; nothing stored', async () => {
    const { outcome, calls, rows } = await askWith({ kind: '429', retryAfterSeconds: 1 }, 10);
    expect(outcome.error).toMatchObject({ status: 502, code: 'llm_upstream' });
    expect(calls).toBe(3);
    expect(outcome.elapsedMs).toBeGreaterThanOrEqual(2_000);
    expect(rows).toBe(0);
  });

  it('429 once: retried after retry-after and answered; stored once', async () => {
    const { outcome, calls, rows, answer } = await askWith({ kind: '429', retryAfterSeconds: 1 }, 1);
    expect(outcome.end).toBe('done');
    expect(calls).toBe(2);
    expect(rows).toBe(1);
    expect(reassemble(outcome.events)).toBe(answer);
  });

  it('500 every time: 3 attempts with backoff, then 502 llm_upstream; nothing stored', async () => {
    const { outcome, calls, rows } = await askWith({ kind: '500' }, 10);
    expect(outcome.error).toMatchObject({ status: 502, code: 'llm_upstream' });
    expect(calls).toBe(3);
    expect(rows).toBe(0);
  });

  it('a stalled upstream (no bytes): 504 at the ask deadline; nothing stored', async () => {
    const { outcome, calls, rows } = await askWith({ kind: 'stall' }, 10);
    expect(outcome.error).toMatchObject({ status: 504, code: 'llm_upstream' });
    expect(calls).toBe(1);
    expect(outcome.elapsedMs).toBeLessThan(DEADLINE_MS + 3_000);
    expect(rows).toBe(0);
  });

  it('a disconnect mid-stream (text already sent): no silent retry, 502; the half answer is not stored', async () => {
    const { outcome, calls, rows } = await askWith({ kind: 'disconnect', afterChunks: 4 }, 10);
    expect(outcome.events.filter((e) => e.type === 'delta').length).toBeGreaterThan(0);
    expect(outcome.error).toMatchObject({ status: 502, code: 'llm_upstream' });
    expect(calls).toBe(1);
    expect(rows).toBe(0);
  });

  it('a stream that ends without its final event: 502, the half answer is not stored', async () => {
    const { outcome, rows } = await askWith({ kind: 'truncate' }, 10);
    expect(outcome.error?.status).toBe(502);
    expect(outcome.end).toBe('error');
    expect(rows).toBe(0);
  });

  /** Event types with runs of `delta` collapsed to one. */
  const shape = (events: AskEvent[]) =>
    events.map((e) => e.type).filter((t, i, all) => !(t === 'delta' && all[i - 1] === 'delta'));

  it('an OpenAI stream whose finish_reason chunk is its last bytes, with no blank line: done, stored once', async () => {
    const { outcome, calls, rows, answer } = await askWith({ kind: 'unterminated-final' }, 1);
    expect(shape(outcome.events)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
    expect([calls, rows, answer]).toEqual([1, 1, FAKE_ANSWER]);
    expect(reassemble(outcome.events)).toBe(FAKE_ANSWER);
  });

  it('an Anthropic stream whose message_stop is its last bytes, with no blank line: done, stored once', async () => {
    await fx.projects.updateSettings(fx.projectId, {
      llmSettings: { provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: upstream.url },
    });
    try {
      const { outcome, calls, rows, answer } = await askWith({ kind: 'unterminated-final' }, 1, 'anthropic.messages');
      expect(shape(outcome.events)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'done']);
      expect([calls, rows, answer]).toEqual([1, 1, FAKE_ANSWER]);
      expect(reassemble(outcome.events)).toBe(FAKE_ANSWER);
      // …while a stream that truly lacks message_stop stays a 502 that stores nothing.
      const truncated = await askWith({ kind: 'truncate' }, 10, 'anthropic.messages');
      expect([truncated.outcome.end, truncated.outcome.error?.status, truncated.rows]).toEqual(['error', 502, 0]);
    } finally {
      await fx.projects.updateSettings(fx.projectId, {
        llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      });
    }
  });

  it('a content filter naming the key: 502 at once, details sanitised, nothing stored', async () => {
    const { outcome, calls, rows } = await askWith(
      { kind: 'content-filter', message: `Blocked by content filter (key ${PLANTED_KEY})` },
      1,
    );
    expect([outcome.end, outcome.error?.status, outcome.error?.code, calls, rows]).toEqual([
      'error',
      502,
      'llm_upstream',
      1,
      0,
    ]);
    expect(JSON.stringify(outcome.error)).not.toContain(PLANTED_KEY);
  });

  it('leaks neither the provider key nor the project API key into any event or any log line of the three apps', () => {
    expect(seenEvents.length).toBeGreaterThan(0);
    const events = JSON.stringify(seenEvents);
    expect(events).not.toContain(PLANTED_KEY);
    expect(events).not.toContain(fx.apiKey);
    for (const app of Object.values(fx.stack.apps)) {
      const log = readFileSync(app.logFile, 'utf8');
      expect({ app: app.name, provider: log.includes(PLANTED_KEY), api: log.includes(fx.apiKey) }).toEqual({
        app: app.name,
        provider: false,
        api: false,
      });
    }
  });
});
