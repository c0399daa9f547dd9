import { type FaultFixture, isTyped, reassemble, rowsPerAsk, runUnderFault, type RunAsk, startFixture, summarise } from './fixture';
import { type RedisServer, startRedis } from './servers';

const DEADLINE_MS = 20_000;
/** A client gives up this long after the deadline: an ask still open then has hung. */
const GRACE_MS = 8_000;

describe('fault: Redis restarts during a run of 50 asks', () => {
  let redis: RedisServer;
  let fx: FaultFixture;
  let asks: RunAsk[];
  let downMs = 0;

  beforeAll(async () => {
    redis = await startRedis();
    fx = await startFixture({
      name: 'redis-restart',
      redisUrl: redis.url,
      env: { LOCAL_LLM_CHUNK_DELAY_MS: '20', ASK_DEADLINE_MS: String(DEADLINE_MS), SYNTHESIS_LOCK_DURATION_MS: '5000', SYNTHESIS_STALLED_INTERVAL_MS: '2000' },
    });
    const run = await runUnderFault(fx, {
      count: 50,
      spacingMs: 80,
      limitMs: DEADLINE_MS + GRACE_MS,
      faultAtMs: 2_000,
      fault: () => redis.restart({ keepData: true, downMs: 1_500 }),
    });
    asks = run.asks;
    downMs = run.faultResult as number;
    console.log(`redis restart (down ${downMs} ms): ${JSON.stringify(summarise(asks))}`);
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('ends every accepted ask with done or a typed error event before its deadline', () => {
    const followed = asks.flatMap((a) => (a.followed ? [a.followed] : []));
    expect(followed.filter((f) => f.end === 'hung').map((f) => f.askId)).toEqual([]);
    for (const f of followed) {
      if (f.end === 'error') expect(isTyped(f.error)).toBe(true);
      expect(f.elapsedMs).toBeLessThan(DEADLINE_MS + GRACE_MS);
    }
  });

  it('answers a POST it cannot take with a typed 503 (never a 500), and takes every ask once the server is back', () => {
    expect(asks.flatMap((a) => a.rejections).filter((r) => !r.startsWith('503 '))).toEqual([]);
    expect(asks.filter((a) => a.rejected)).toEqual([]);
  });

  it('stores no ask twice; each done ask once, with the text the client reassembled', async () => {
    const followed = asks.flatMap((a) => (a.followed ? [a.followed] : []));
    const stored = await rowsPerAsk(fx.db.dataSource, followed.map((f) => f.askId));
    for (const f of followed) {
      const row = stored.get(f.askId)!;
      expect(row.count).toBeLessThanOrEqual(1);
      if (f.end === 'done') {
        expect(row.count).toBe(1);
        expect(reassemble(f.events)).toBe(row.answer);
      }
    }
  });
});
