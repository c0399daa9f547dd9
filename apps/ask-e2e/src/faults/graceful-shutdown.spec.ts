import type { ChildProcess } from 'node:child_process';
import type { AskEvent } from '@ask/ask-contracts';
import { type FaultFixture, follow, QUESTIONS, reassemble, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

/** How long a SIGTERMed app may take to exit by itself before the test calls it stuck. */
const EXIT_LIMIT_MS = 20_000;

/** SIGTERM `child` and wait up to `limitMs` for it to exit on its own (no SIGKILL). */
async function terminate(child: ChildProcess, limitMs: number): Promise<{ exited: boolean; ms: number }> {
  const started = Date.now();
  const exited = new Promise<boolean>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true);
    child.once('exit', () => resolve(true));
  });
  child.kill('SIGTERM');
  const ok = await Promise.race([exited, new Promise<boolean>((r) => setTimeout(() => r(false), limitMs))]);
  if (!ok) child.kill('SIGKILL');
  return { exited: ok, ms: Date.now() - started };
}

/** Reads an ask's events until `count` deltas have arrived. */
async function readDeltas(fx: FaultFixture, askId: string, count: number): Promise<AskEvent[]> {
  const seen: AskEvent[] = [];
  for await (const event of fx.client.events(askId)) {
    seen.push(event);
    if (seen.filter((e) => e.type === 'delta').length >= count) break;
  }
  return seen;
}

describe('graceful shutdown: SIGTERM on each app while asks are in flight', () => {
  let redis: RedisServer;
  let fx: FaultFixture;

  beforeAll(async () => {
    redis = await startRedis();
    fx = await startFixture({
      name: 'graceful-shutdown',
      redisUrl: redis.url,
      env: {
        LOCAL_LLM_CHUNK_DELAY_MS: '40',
        ASK_DEADLINE_MS: '60000',
        SYNTHESIS_LOCK_DURATION_MS: '3000',
        SYNTHESIS_STALLED_INTERVAL_MS: '1000',
      },
    });
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('the synthesis worker finishes or hands back its jobs and exits; every ask ends done, stored once', async () => {
    const asks = await Promise.all(QUESTIONS.slice(0, 2).map((q) => fx.client.ask(fx.projectId, q)));
    const before = await Promise.all(asks.map((a) => readDeltas(fx, a.askId, 3)));
    const { exited, ms } = await terminate(fx.stack.apps['synthesis-worker'].child, EXIT_LIMIT_MS);
    expect({ exited, withinLimit: ms < EXIT_LIMIT_MS }).toEqual({ exited: true, withinLimit: true });
    await fx.stack.start('synthesis-worker');
    const outcomes = await Promise.all(
      asks.map((a, i) => follow(fx.client, a.askId, a.sessionId, 45_000, before[i][before[i].length - 1].id)),
    );
    const stored = await rowsPerAsk(
      fx.db.dataSource,
      asks.map((a) => a.askId),
    );
    for (const [i, a] of asks.entries()) {
      expect(outcomes[i].end).toBe('done');
      expect(stored.get(a.askId)!.count).toBe(1);
      expect(reassemble([...before[i], ...outcomes[i].events])).toBe(stored.get(a.askId)!.answer);
    }
  });

  it('the gateway ends its open event streams and exits; the client stream closes instead of hanging', async () => {
    const accepted = await fx.client.ask(fx.projectId, QUESTIONS[2]);
    const received: AskEvent[] = [];
    const reading = (async () => {
      for await (const event of fx.client.events(accepted.askId)) received.push(event);
    })().catch(() => undefined);
    while (!received.some((e) => e.type === 'delta')) await new Promise((r) => setTimeout(r, 50));
    const { exited, ms } = await terminate(fx.stack.apps['api-gateway'].child, EXIT_LIMIT_MS);
    expect({ exited, withinLimit: ms < EXIT_LIMIT_MS }).toEqual({ exited: true, withinLimit: true });
    await reading;
    expect(received.some((e) => e.type === 'done')).toBe(false);
  });

  it('the retrieval worker exits on SIGTERM', async () => {
    const { exited, ms } = await terminate(fx.stack.apps['retrieval-worker'].child, EXIT_LIMIT_MS);
    expect({ exited, withinLimit: ms < EXIT_LIMIT_MS }).toEqual({ exited: true, withinLimit: true });
  });
});
