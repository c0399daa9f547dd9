import {
  type FaultFixture,
  isTyped,
  reassemble,
  rowsPerAsk,
  runUnderFault,
  type RunAsk,
  startFixture,
  summarise,
} from './fixture';
import { type PostgresServer, type RedisServer, startPostgres, startRedis } from '@ask/stack';

const DEADLINE_MS = 20_000;
/** A client gives up this long after the deadline: an ask still open then has hung. */
const GRACE_MS = 8_000;

/** The servers a case runs on; `restart` stops one of them for about 1.5 s and starts it again. */
interface RestartCase {
  server: string;
  name: string;
  withPostgres: boolean;
  restart(servers: { redis: RedisServer; postgres?: PostgresServer }): Promise<number>;
}

const CASES: RestartCase[] = [
  {
    server: 'Redis',
    name: 'redis-restart',
    withPostgres: false,
    restart: ({ redis }) => redis.restart({ keepData: true, downMs: 1_500 }),
  },
  {
    server: 'PostgreSQL',
    name: 'postgres-restart',
    withPostgres: true,
    restart: ({ postgres }) => postgres!.restart({ mode: 'fast', downMs: 1_500 }),
  },
];

describe.each(CASES)('fault: $server restarts during a run of 50 asks', (c) => {
  let redis: RedisServer;
  let postgres: PostgresServer | undefined;
  let fx: FaultFixture;
  let asks: RunAsk[];
  let downMs = 0;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([
      startRedis(),
      c.withPostgres ? startPostgres() : Promise.resolve(undefined),
    ]);
    fx = await startFixture({
      name: c.name,
      redisUrl: redis.url,
      postgres,
      env: {
        LOCAL_LLM_CHUNK_DELAY_MS: '20',
        ASK_DEADLINE_MS: String(DEADLINE_MS),
        SYNTHESIS_LOCK_DURATION_MS: '5000',
        SYNTHESIS_STALLED_INTERVAL_MS: '2000',
      },
    });
    const run = await runUnderFault(fx, {
      count: 50,
      spacingMs: 80,
      limitMs: DEADLINE_MS + GRACE_MS,
      faultAtMs: 2_000,
      fault: () => c.restart({ redis, postgres }),
    });
    asks = run.asks;
    downMs = run.faultResult as number;
    console.log(`${c.name} (down ${downMs} ms): ${JSON.stringify(summarise(asks))}`);
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
    await postgres?.close();
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
    const stored = await rowsPerAsk(
      fx.db.dataSource,
      followed.map((f) => f.askId),
    );
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
