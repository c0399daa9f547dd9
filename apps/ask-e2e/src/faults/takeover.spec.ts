/**
 * Takeover bounded (issue 31 item 3): the synthesis worker streaming an ask is SIGKILLed while a
 * second worker runs, with the default lock settings (SYNTHESIS_LOCK_DURATION_MS 6 s renewed every
 * SYNTHESIS_LOCK_RENEW_MS 2 s, SYNTHESIS_STALLED_INTERVAL_MS 2 s). The other worker takes the ask
 * over; the time from the kill to its `reset` is printed, not asserted. Asserted: the event contract
 * (one terminal event, last; the text after the reset is the stored answer) and the exact counts:
 * two chat calls at the fake upstream (the killed run's and the takeover's) and two `provider_calls`
 * rows for them (the killed run's written before its request, left `in_flight`), one embedding call
 * and its row, one stored pair.
 */
import { FAKE_ANSWER, FAKE_ANSWER_CHUNKS, type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import type { AskEvent } from '@ask/ask-contracts';
import { type FaultFixture, follow, reassemble, rowsPerAsk, startFixture } from './fixture';
import { pidsConnectedTo, type RedisServer, startRedis } from '@ask/stack';

/** The fake upstream's pause between writes: its answer (about 8 writes) streams for about 6 s. */
const CHUNK_MS = 750;

/** Event types with runs of `delta` collapsed to one. */
const shape = (events: AskEvent[]) =>
  events.map((e) => e.type).filter((t, i, all) => !(t === 'delta' && all[i - 1] === 'delta'));

describe('fault: SIGKILL of the synthesis worker mid-stream, a second worker running (default lock settings)', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let fx: FaultFixture;
  const workerPids: number[] = [];

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startFakeUpstream({ chunkDelayMs: CHUNK_MS })]);
    fx = await startFixture({
      name: 'takeover',
      redisUrl: redis.url,
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      embeddingSettings: {
        provider: 'openai',
        model: 'text-embedding-3-small',
        dimensions: 256,
        baseUrl: `${upstream.url}/v1`,
      },
      credentials: { apiKey: 'sk-fake-takeover' },
      env: { ASK_DEADLINE_MS: '90000', SYNTHESIS_CONCURRENCY: '1' },
    });
    workerPids.push(fx.stack.apps['synthesis-worker'].child.pid!);
    workerPids.push((await fx.stack.start('synthesis-worker')).child.pid!);
  });

  afterAll(async () => {
    await fx?.close();
    await upstream?.close();
    await redis?.close();
  });

  it('the other worker takes the ask over: one terminal event, the stored answer; every call paid is a row', async () => {
    const accepted = await fx.client.ask(fx.projectId, 'How do I create an HNSW index with pgvector?');
    const before: AskEvent[] = [];
    for await (const event of fx.client.events(accepted.askId, { signal: AbortSignal.timeout(60_000) })) {
      before.push(event);
      if (event.type === 'delta') break;
    }
    expect(shape(before)).toEqual(['accepted', 'retrieved', 'budget', 'delta']);

    const [victim] = pidsConnectedTo(upstream.port, workerPids);
    expect(victim).toBeDefined();
    process.kill(victim, 'SIGKILL');
    const killedAt = Date.now();

    const rest = await follow(fx.client, accepted.askId, accepted.sessionId, 75_000, before[before.length - 1].id);
    const doneAfterMs = Date.now() - killedAt;
    // A stream id is the time Redis wrote the entry (ms): the takeover run's reset, after the kill.
    const reset = rest.events.find((e) => e.type === 'reset');
    const takeoverMs = reset ? Number(reset.id.split('-')[0]) - killedAt : null;
    const all = (await follow(fx.client, accepted.askId, accepted.sessionId, 10_000)).events;
    const stored = (await rowsPerAsk(fx.db.dataSource, [accepted.askId])).get(accepted.askId)!;
    const rows: Array<{ operation: string; finish_reason: string | null }> = await fx.db.dataSource.query(
      'SELECT operation, finish_reason FROM provider_calls WHERE ask_id = $1 ORDER BY operation, started_at',
      [accepted.askId],
    );
    const calls = {
      chat: upstream.requests.filter((r) => r.route === 'openai.chat').length,
      embeddings: upstream.requests.filter((r) => r.route === 'openai.embeddings').length,
    };
    // The takeover time, from the kill to the new run's reset and to done (printed, never asserted).
    console.log(
      `takeover after SIGKILL (defaults: lock 6000 ms renewed every 2000 ms, stalled check 2000 ms): reset ${takeoverMs} ms, done ${doneAfterMs} ms after the kill; ${JSON.stringify({ shape: shape(all), calls, rows, stored: stored.count })}`,
    );

    expect(rest.end).toBe('done');
    expect(shape(all)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'reset', 'budget', 'delta', 'done']);
    expect(all.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
    const afterReset = all.slice(all.findIndex((e) => e.type === 'reset') + 1);
    expect(afterReset.filter((e) => e.type === 'delta').map((e) => (e.data as { text: string }).text)).toEqual([
      ...FAKE_ANSWER_CHUNKS,
    ]);
    expect(stored).toEqual({ count: 1, answer: FAKE_ANSWER });
    expect(reassemble([...before, ...rest.events])).toBe(FAKE_ANSWER);
    // Paid twice (the killed run's call and the takeover's), recorded twice; embedded once.
    expect(calls).toEqual({ chat: 2, embeddings: 1 });
    expect(rows).toEqual([
      { operation: 'chat', finish_reason: 'in_flight' },
      { operation: 'chat', finish_reason: 'stop' },
      { operation: 'embeddings', finish_reason: null },
    ]);
  });
});
