/**
 * A session deleted under a streaming ask (DELETE …/sessions/:id through the gateway, the three apps
 * on a suite's own Redis, the project's LLM the fake OpenAI upstream on loopback streaming one chunk
 * every 1.5 s): the ask ends at once with one typed 404, the last event of its stream forever; the
 * provider was called once (no retry, no further call); nothing stored; the `asks` row records it.
 */
import { FAKE_ANSWER_CHUNKS, type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import type { AskEvent } from '@ask/ask-contracts';
import { type FaultFixture, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

const CHUNK_DELAY_MS = 1_500;

describe('fault: the session is deleted while its ask streams', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let fx: FaultFixture;
  let askId: string;
  let sessionId: string;
  let deleteStatus = 0;
  const events: AskEvent[] = [];
  let callsAtEnd = 0;

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startFakeUpstream({ chunkDelayMs: CHUNK_DELAY_MS })]);
    fx = await startFixture({
      name: 'session-deleted',
      redisUrl: redis.url,
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      credentials: { apiKey: 'sk-session-deleted-suite' },
      env: { ASK_DEADLINE_MS: '60000' },
    });
    const accepted = await fx.client.ask(fx.projectId, 'How do I create an HNSW index with pgvector?');
    askId = accepted.askId;
    sessionId = accepted.sessionId;
    for await (const event of fx.client.events(askId, { signal: AbortSignal.timeout(30_000) })) {
      events.push(event);
      if (event.type === 'delta' && deleteStatus === 0) {
        const reply = await fetch(`${fx.stack.gatewayUrl}/api/v1/projects/${fx.projectId}/sessions/${sessionId}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${fx.apiKey}` },
        });
        deleteStatus = reply.status;
      }
    }
    callsAtEnd = upstream.requests.filter((r) => r.route === 'openai.chat').length;
    // Longer than the rest of the answer would have taken, and than a retry's backoff.
    await new Promise((r) => setTimeout(r, FAKE_ANSWER_CHUNKS.length * CHUNK_DELAY_MS + 3_000));
  });

  afterAll(async () => {
    await fx?.close();
    await upstream?.close();
    await redis?.close();
  });

  it('answers the DELETE 204 and ends the ask with one 404, its last event: accepted, retrieved, budget, delta, error', () => {
    expect(deleteStatus).toBe(204);
    expect(events.map((e) => e.type)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'error']);
    expect(events[3].data).toEqual({ text: FAKE_ANSWER_CHUNKS[0] });
    expect(events[4].data).toEqual({
      status: 404,
      code: 'not_found',
      error: 'not found',
      details: `session ${sessionId} was deleted while the ask was running`,
    });
  });

  it('publishes nothing after it, however long the worker had left: a full read is the same five events', async () => {
    const again: AskEvent[] = [];
    for await (const event of fx.client.events(askId, { signal: AbortSignal.timeout(10_000) })) again.push(event);
    expect(again).toEqual(events);
    const resumed: AskEvent[] = [];
    for await (const event of fx.client.events(askId, {
      lastEventId: events[4].id,
      signal: AbortSignal.timeout(10_000),
    }))
      resumed.push(event);
    expect(resumed).toEqual([]);
  });

  it('called the provider once: no retry, no further call', () => {
    expect([callsAtEnd, upstream.requests.filter((r) => r.route === 'openai.chat').length]).toEqual([1, 1]);
  });

  it('stored nothing, the session is gone, and the asks row records the 404', async () => {
    expect((await rowsPerAsk(fx.db.dataSource, [askId])).get(askId)).toEqual({ count: 0, answer: null });
    expect(
      await fx.db.dataSource.query('SELECT count(*)::int AS n FROM ask_sessions WHERE id = $1', [sessionId]),
    ).toEqual([{ n: 0 }]);
    expect(await fx.db.dataSource.query('SELECT state, error_code FROM asks WHERE id = $1', [askId])).toEqual([
      { state: 'error', error_code: 'not_found' },
    ]);
  });
});
