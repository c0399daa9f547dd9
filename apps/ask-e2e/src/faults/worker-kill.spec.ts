import type { AskEvent } from '@ask/ask-contracts';
import { type FaultFixture, follow, QUESTIONS, reassemble, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

/** The synthesis worker's lock and stalled check, shortened so recovery takes seconds, not 45 s. */
const LOCK_MS = 3_000;
const STALLED_MS = 1_000;

describe('fault: the synthesis worker is SIGKILLed while it streams', () => {
  let redis: RedisServer;
  let fx: FaultFixture;

  beforeAll(async () => {
    redis = await startRedis();
    fx = await startFixture({
      name: 'worker-kill',
      redisUrl: redis.url,
      env: {
        LOCAL_LLM_CHUNK_DELAY_MS: '50',
        ASK_DEADLINE_MS: '60000',
        SYNTHESIS_LOCK_DURATION_MS: String(LOCK_MS),
        SYNTHESIS_STALLED_INTERVAL_MS: String(STALLED_MS),
      },
    });
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('another worker completes each ask: one stored pair, reassembled text (after reset) equals it', async () => {
    const asks = await Promise.all(QUESTIONS.slice(0, 3).map((q) => fx.client.ask(fx.projectId, q)));
    // Follow each stream until every ask has streamed some text, then kill the worker.
    const seen = new Map<string, AskEvent[]>(asks.map((a) => [a.askId, []]));
    const deltas = (askId: string) => seen.get(askId)!.filter((e) => e.type === 'delta').length;
    const watchers = asks.map(async (a) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 30_000);
      try {
        for await (const event of fx.client.events(a.askId, { signal: controller.signal })) {
          seen.get(a.askId)!.push(event);
          if (deltas(a.askId) >= 4) break;
        }
      } finally {
        clearTimeout(timer);
      }
    });
    await Promise.all(watchers);
    for (const a of asks) {
      expect(deltas(a.askId)).toBeGreaterThanOrEqual(4);
      expect(seen.get(a.askId)!.some((e) => e.type === 'done')).toBe(false);
    }

    const victim = fx.stack.apps['synthesis-worker'].child;
    victim.kill('SIGKILL');
    await new Promise<void>((r) =>
      victim.exitCode !== null || victim.signalCode !== null ? r() : victim.once('exit', () => r()),
    );
    const killedAt = Date.now();
    await fx.stack.start('synthesis-worker');

    const outcomes = await Promise.all(
      asks.map(async (a) => {
        const before = seen.get(a.askId)!;
        const rest = await follow(fx.client, a.askId, a.sessionId, 45_000, before[before.length - 1].id);
        // The whole stream once more, from the start (what a late client or the dashboard reads).
        const resumed = await follow(fx.client, a.askId, a.sessionId, 10_000);
        return { askId: a.askId, before, rest, all: resumed.events, recoveredMs: Date.now() - killedAt };
      }),
    );
    const stored = await rowsPerAsk(
      fx.db.dataSource,
      asks.map((a) => a.askId),
    );
    const figures = outcomes.map((o) => ({
      askId: o.askId.slice(0, 8),
      end: o.rest.end,
      resets: o.all.filter((e) => e.type === 'reset').length,
      deltasBeforeKill: o.before.filter((e) => e.type === 'delta').length,
      rows: stored.get(o.askId)!.count,
      doneAfterKillMs: o.recoveredMs,
    }));
    console.log(`worker kill: lock ${LOCK_MS} ms, stalled check ${STALLED_MS} ms\n${JSON.stringify(figures, null, 1)}`);

    for (const o of outcomes) {
      expect(o.rest.end).toBe('done');
      expect(stored.get(o.askId)!.count).toBe(1);
      // The whole stream, read from the start, restarts the answer with `reset` after the kill…
      expect(o.all.filter((e) => e.type === 'reset').length).toBeGreaterThanOrEqual(1);
      expect(new Set(o.all.map((e) => e.id)).size).toBe(o.all.length);
      // …so the text a client reassembles, from the start or across the kill, is the stored answer.
      expect(reassemble(o.all)).toBe(stored.get(o.askId)!.answer);
      expect(reassemble([...o.before, ...o.rest.events])).toBe(stored.get(o.askId)!.answer);
      // Only one terminal event.
      expect(o.all.filter((e) => e.type === 'done' || e.type === 'error').length).toBe(1);
    }
  });
});
