import type { AskEvent } from '@ask/ask-contracts';
import { seededRandom } from '@ask/testing';
import { type FaultFixture, QUESTIONS, reassemble, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

const ASKS = 5;
const RECONNECTS_PER_ASK = 200;
const SEED = 0x5eed0007;

/** The seeded PRNG, so a failing run can be replayed. */
const prng = seededRandom;

describe(`fault: ${ASKS * RECONNECTS_PER_ASK} SSE reconnects at random points with Last-Event-ID`, () => {
  let redis: RedisServer;
  let fx: FaultFixture;

  beforeAll(async () => {
    redis = await startRedis();
    fx = await startFixture({ name: 'reconnects', redisUrl: redis.url, env: { LOCAL_LLM_CHUNK_DELAY_MS: '60' } });
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('every reconnect continues exactly after its Last-Event-ID; every reassembled answer is the stored one', async () => {
    const random = prng(SEED);
    const accepted = await Promise.all(QUESTIONS.slice(0, ASKS).map((q) => fx.client.ask(fx.projectId, q)));
    const mismatches: string[] = [];
    let midStream = 0;

    const runOne = async (askId: string) => {
      /** Every event of the ask in stream order, as learnt so far. */
      const canonical: AskEvent[] = [];
      let reconnects = -1;
      let ended = false;
      for (let guard = 0; (reconnects < RECONNECTS_PER_ASK || !ended) && guard < RECONNECTS_PER_ASK * 3; guard++) {
        // Resume point: mostly the last event seen, sometimes an earlier one, sometimes the start.
        const roll = random();
        const from =
          canonical.length === 0 || roll < 0.15
            ? -1
            : roll < 0.4
              ? Math.floor(random() * canonical.length)
              : canonical.length - 1;
        const take = 1 + Math.floor(random() * 6);
        const controller = new AbortController();
        // While the answer streams, a connection is also cut after 5-45 ms, wherever the stream is.
        const timer = ended ? undefined : setTimeout(() => controller.abort(), 5 + Math.floor(random() * 40));
        reconnects += 1;
        if (!ended && from >= 0) midStream += 1;
        let index = from + 1;
        let got = 0;
        try {
          for await (const event of fx.client.events(askId, {
            lastEventId: from >= 0 ? canonical[from].id : undefined,
            signal: controller.signal,
          })) {
            if (index < canonical.length) {
              const known = canonical[index];
              if (
                known.id !== event.id ||
                known.type !== event.type ||
                JSON.stringify(known.data) !== JSON.stringify(event.data)
              ) {
                mismatches.push(
                  `${askId} after ${from >= 0 ? canonical[from].id : 'start'}: expected ${known.id} ${known.type}, got ${event.id} ${event.type}`,
                );
              }
            } else {
              if (
                canonical.length &&
                canonical[canonical.length - 1].id >= event.id &&
                event.id.length === canonical[canonical.length - 1].id.length
              ) {
                mismatches.push(`${askId}: ${event.id} not after ${canonical[canonical.length - 1].id}`);
              }
              canonical.push(event);
            }
            index += 1;
            if (event.type === 'done' || event.type === 'error') ended = true;
            if ((got += 1) >= take) break;
          }
        } catch (err) {
          if ((err as Error).name !== 'AbortError') throw err;
        } finally {
          clearTimeout(timer);
          controller.abort();
        }
      }
      return { askId, canonical, reconnects };
    };

    const results = await Promise.all(accepted.map((a) => runOne(a.askId)));
    const stored = await rowsPerAsk(
      fx.db.dataSource,
      accepted.map((a) => a.askId),
    );
    const total = results.reduce((n, r) => n + r.reconnects, 0);
    console.log(
      `reconnects: ${total} (seed ${SEED}), ${midStream} resumed before the ask had ended; events per ask ${results.map((r) => r.canonical.length).join(', ')}`,
    );
    expect(mismatches).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(ASKS * RECONNECTS_PER_ASK);
    for (const r of results) {
      expect(r.canonical[r.canonical.length - 1].type).toBe('done');
      expect(new Set(r.canonical.map((e) => e.id)).size).toBe(r.canonical.length);
      expect(stored.get(r.askId)!.count).toBe(1);
      expect(reassemble(r.canonical)).toBe(stored.get(r.askId)!.answer);
    }
  });
});
