import Redis from 'ioredis';
import type { AskEvent } from '@ask/ask-contracts';
import { FAKE_ANSWER, FAKE_ANSWER_CHUNKS, type FakeUpstream, startFakeUpstream } from '@ask/fake-upstream';
import { type FaultFixture, follow, reassemble, rowsPerAsk, startFixture } from './fixture';
import { pidsConnectedTo, type RedisServer, startRedis } from '@ask/stack';

/** The synthesis worker's job lock and stalled check, short so the pause outlasts the lock in seconds. */
const LOCK_MS = 3_000;
const STALLED_MS = 1_000;
/** How long the worker is stopped: well past the lock plus one stalled check. */
const PAUSE_MS = LOCK_MS + STALLED_MS + 3_000;
/**
 * Pause between the fake upstream's writes: its answer (role chunk, 4 text chunks, finish, usage,
 * [DONE]) takes about 8 × this, longer than the pause, so the paused run is still mid-answer when it
 * runs again.
 */
const CHUNK_MS = 1_500;

/** Event types with runs of `delta` collapsed to one. */
const shape = (events: AskEvent[]) =>
  events.map((e) => e.type).filter((t, i, all) => !(t === 'delta' && all[i - 1] === 'delta'));

describe.each([
  { workers: 1, who: 'the only synthesis worker, which takes the job up again itself' },
  { workers: 2, who: 'one of two synthesis workers; the other takes the job up' },
])('fault: SIGSTOP past the job lock: $who', ({ workers }) => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let fx: FaultFixture;
  let reader: Redis;
  /** Pids of the synthesis workers. */
  const workerPids: number[] = [];

  beforeAll(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startFakeUpstream({ chunkDelayMs: CHUNK_MS })]);
    fx = await startFixture({
      name: `one-run-${workers}`,
      redisUrl: redis.url,
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      credentials: { apiKey: 'sk-fake-one-run' },
      env: {
        ASK_DEADLINE_MS: '90000',
        SYNTHESIS_LOCK_DURATION_MS: String(LOCK_MS),
        SYNTHESIS_STALLED_INTERVAL_MS: String(STALLED_MS),
        SYNTHESIS_CONCURRENCY: '1',
      },
    });
    workerPids.push(fx.stack.apps['synthesis-worker'].child.pid!);
    if (workers === 2) workerPids.push((await fx.stack.start('synthesis-worker')).child.pid!);
    reader = new Redis(redis.url);
  });

  afterAll(async () => {
    reader?.disconnect();
    await fx?.close();
    await upstream?.close();
    await redis?.close();
  });

  it('the paused run stops: one done, last; nothing after it; the text after the reset is the stored answer', async () => {
    const accepted = await fx.client.ask(fx.projectId, 'How do I create an HNSW index with pgvector?');
    const before: AskEvent[] = [];
    for await (const event of fx.client.events(accepted.askId, { signal: AbortSignal.timeout(60_000) })) {
      before.push(event);
      if (event.type === 'delta') break;
    }
    expect(before.map((e) => e.type)).toEqual(['accepted', 'retrieved', 'budget', 'delta']);

    // Stop the worker whose run is streaming from the upstream (SIGSTOP: no exit, no lock renewal).
    const [paused] = pidsConnectedTo(upstream.port, workerPids);
    expect(paused).toBeDefined();
    process.kill(paused, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    process.kill(paused, 'SIGCONT');

    const rest = await follow(fx.client, accepted.askId, accepted.sessionId, 60_000, before[before.length - 1].id);
    expect(rest.end).toBe('done');
    // Give the resumed run every chance to write more: a lock renewal and a stalled check, twice over.
    await new Promise((r) => setTimeout(r, 2 * (LOCK_MS + STALLED_MS)));

    const key = `${fx.stack.env.ASK_KEY_PREFIX}:ask:${accepted.askId}:events`;
    const stream: AskEvent[] = (await reader.xrange(key, '-', '+')).map(([id, fields]) => ({
      id,
      type: fields[1] as AskEvent['type'],
      data: JSON.parse(fields[3]),
    }));
    const stored = (await rowsPerAsk(fx.db.dataSource, [accepted.askId])).get(accepted.askId)!;
    const chatCalls = upstream.requests.filter((r) => r.route === 'openai.chat').length;
    const afterReset = stream.slice(stream.findIndex((e) => e.type === 'reset') + 1);
    console.log(
      `SIGSTOP ${PAUSE_MS} ms, ${workers} worker(s), lock ${LOCK_MS} ms: ${JSON.stringify({ shape: shape(stream), events: stream.length, chatCalls, rows: stored.count })}`,
    );

    // The stream as written: the first run's opening, one reset, the second run alone, done last.
    expect(shape(stream)).toEqual(['accepted', 'retrieved', 'budget', 'delta', 'reset', 'budget', 'delta', 'done']);
    expect(afterReset.filter((e) => e.type === 'delta').map((e) => (e.data as { text: string }).text)).toEqual([
      ...FAKE_ANSWER_CHUNKS,
    ]);
    expect(stored).toEqual({ count: 1, answer: FAKE_ANSWER });
    expect(reassemble(stream)).toBe(FAKE_ANSWER);
    expect(reassemble([...before, ...rest.events])).toBe(FAKE_ANSWER);
    // Two provider calls: the paused run's (aborted) and the new run's; the paused run made no other.
    expect(chatCalls).toBe(2);
  });
});
